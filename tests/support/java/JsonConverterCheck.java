// Reads records written with sink.kafka.schemas.enable through Kafka Connect's own JsonConverter
// (schemas.enable=true), the way a Connect sink or a Debezium consumer would, and checks that nothing is lost:
// each payload converted to Connect data and back must be the same JSON.
//
// Input (stdin): one record per line, "topic<TAB>key<TAB>value", "null" for an absent key or value (JSON text
// never holds a raw tab). Output: one line per record, "ok<TAB><Connect value as Struct.toString()>", or
// "error<TAB><line number>: <reason>". Exit status 1 when any record failed.
//
// Run with the broker's jars: java -cp '<kafka libs>/*' JsonConverterCheck.java < records.tsv

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

public class JsonConverterCheck {
  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    JsonConverter keys = new JsonConverter();
    keys.configure(Map.of("schemas.enable", "true", "decimal.format", "NUMERIC"), true);
    JsonConverter values = new JsonConverter();
    values.configure(Map.of("schemas.enable", "true", "decimal.format", "NUMERIC"), false);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    boolean failed = false;
    int number = 0;
    for (String line; (line = in.readLine()) != null; ) {
      ++number;
      String[] parts = line.split("\t", -1);
      if (parts.length != 3) {
        System.out.println("error\t" + number + ": expected topic, key and value separated by tabs");
        failed = true;
        continue;
      }
      try {
        check(mapper, keys, parts[0], parts[1]);
        String value = check(mapper, values, parts[0], parts[2]);
        System.out.println("ok\t" + value);
      } catch (Exception e) {
        System.out.println("error\t" + number + ": " + e);
        failed = true;
      }
    }
    System.exit(failed ? 1 : 0);
  }

  // Converts one key or value to Connect data and back; returns the Connect value's text.
  static String check(ObjectMapper mapper, JsonConverter converter, String topic, String text) throws Exception {
    if (text.equals("null")) return "null";
    SchemaAndValue data = converter.toConnectData(topic, text.getBytes(StandardCharsets.UTF_8));
    if (data.schema() == null) throw new IllegalStateException("no schema in " + text);
    byte[] back = converter.fromConnectData(topic, data.schema(), data.value());
    JsonNode original = mapper.readTree(text).get("payload");
    JsonNode again = mapper.readTree(back).get("payload");
    String originalText = mapper.writeValueAsString(original);
    String againText = mapper.writeValueAsString(again);
    if (!originalText.equals(againText))
      throw new IllegalStateException("payload changed through Connect data:\n  sent " + originalText + "\n  read " + againText);
    return String.valueOf(data.value());
  }
}
