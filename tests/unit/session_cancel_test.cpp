#include "snapshot/session_cancel.hpp"

#include <gtest/gtest.h>

namespace tidemark::snapshot {
namespace {

TEST(SessionCancel, ACancelBeforeTheSessionIsConnectedIsSeenByItsPublication) {
  SessionCancel cancel;
  EXPECT_EQ(cancel.request(), 0U) << "no session to end yet";
  EXPECT_TRUE(cancel.cancelled());
  EXPECT_FALSE(cancel.publish(42)) << "the session connected after the cancel must not run the query";
  EXPECT_FALSE(cancel.take_ended()) << "nothing was ended: the connection is still good";
}

TEST(SessionCancel, ACancelAfterPublicationEndsThatSessionAndTheNextQueryConnectsAgain) {
  SessionCancel cancel;
  EXPECT_TRUE(cancel.publish(42));
  EXPECT_FALSE(cancel.cancelled());
  EXPECT_EQ(cancel.request(), 42U);
  EXPECT_TRUE(cancel.cancelled());
  cancel.clear();
  EXPECT_FALSE(cancel.cancelled());
  EXPECT_TRUE(cancel.take_ended()) << "the ended session's connection is dead";
  EXPECT_FALSE(cancel.take_ended()) << "once";
}

TEST(SessionCancel, AForgottenSessionIsNeverEnded) {
  SessionCancel cancel;
  EXPECT_TRUE(cancel.publish(7));
  cancel.forget();
  EXPECT_EQ(cancel.request(), 0U) << "an id the server may have given to another session";
  EXPECT_FALSE(cancel.take_ended());
}

TEST(SessionCancel, ACancelThatEndedTheOldSessionWhileReconnectingStillStopsTheNewOne) {
  SessionCancel cancel;
  EXPECT_TRUE(cancel.publish(7));
  EXPECT_EQ(cancel.request(), 7U);  // the cancel reads the old id just before the reader replaces it
  cancel.forget();
  EXPECT_FALSE(cancel.publish(8));
  EXPECT_FALSE(cancel.take_ended()) << "the new session was not ended";
}

}  // namespace
}  // namespace tidemark::snapshot
