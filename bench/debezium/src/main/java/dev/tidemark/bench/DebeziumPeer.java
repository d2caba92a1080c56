package dev.tidemark.bench;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.connect.json.JsonConverter;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

/**
 * Debezium peer for Tidemark's benchmarks (bench/debezium/peer.sh runs it).
 *
 * <p>Runs Debezium's embedded engine with the JSON converter (schemas.enable=false) and a batch consumer that hands
 * each batch to one KafkaProducer (acks=all, idempotent, linger.ms=5, keyed by the record key), waits for every
 * acknowledgement, then marks the batch processed: what Debezium Server's Kafka sink does.
 *
 * <p>Modes:
 * <ul>
 *   <li>{@code incremental-snapshot}: once the connector reports it is streaming (JMX streaming metrics,
 *   Connected=true) and {@code --signal-delay-ms} later, inserts one execute-snapshot row for the count table into the
 *   signal table; timed from that insert until {@code --expected} snapshot records (op=r) of the count table were
 *   acknowledged by Kafka.</li>
 *   <li>{@code streaming}: from the start position (PostgreSQL: the existing slot; MariaDB: the offset store seeded
 *   with --start-file/--start-pos/--start-gtids) until {@code --expected} change records (op=c/u/d) of the count
 *   table were acknowledged. Timed from the JVM's start.</li>
 * </ul>
 *
 * <p>Prints progress lines and one result line on stdout, all starting with "DEBEZIUM ":
 * <pre>DEBEZIUM result mode=... complete=1 rows=N seconds=S rows_per_s=R peak_rss_kb=K ...</pre>
 * Exit status: 0 complete, 2 timeout (partial figures printed), 1 failure.
 *
 * <p>Arguments are {@code --name=value} or {@code --name value}; each also reads from the environment variable
 * DBZ_NAME (upper case, dashes as underscores). {@code --prop k=v} (repeatable) adds or overrides a connector or
 * engine property.
 * <ul>
 *   <li>always: --kind (postgres|mariadb), --mode, --port, --user, --password, --database, --tables (qualified,
 *   comma-separated: public.t / db.t), --bootstrap, --topic-prefix, --expected, --offset-file; optional --host
 *   (127.0.0.1), --count-table (the first of --tables), --partitions (1, for topics the peer has to create),
 *   --startup-timeout-s (300), --timeout-s (1800), --engine-name (the topic prefix), --snapshot-mode</li>
 *   <li>incremental-snapshot: --signal-table, --chunk-size, --signal-delay-ms (0), --signal-id</li>
 *   <li>postgres: --slot, --publication, --publication-autocreate (filtered)</li>
 *   <li>mariadb: --server-id; streaming: --start-file, --start-pos, --start-gtids (seed the offset store)</li>
 * </ul>
 */
public final class DebeziumPeer {

    private static final String PREFIX = "DEBEZIUM ";

    private final Map<String, String> opts;
    private final List<String> extraProps;

    private final String kind;
    private final String mode;
    private final String countTopic;
    private final long expected;
    private final boolean snapshotMode;

    private final AtomicLong counted = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong firstUs = new AtomicLong();
    private final AtomicLong doneUs = new AtomicLong();
    private final AtomicLong doneCpuNs = new AtomicLong();
    private final AtomicLong doneRssKb = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean countingEnabled;

    private KafkaProducer<String, String> producer;
    private Admin admin;
    private final Set<String> knownTopics = ConcurrentHashMap.newKeySet();
    private int autoPartitions;

    private DebeziumPeer(Map<String, String> opts, List<String> extraProps) {
        this.opts = opts;
        this.extraProps = extraProps;
        this.kind = req("kind");
        if (!kind.equals("postgres") && !kind.equals("mariadb")) {
            throw new IllegalArgumentException("--kind must be postgres or mariadb, not " + kind);
        }
        this.mode = req("mode");
        if (!mode.equals("incremental-snapshot") && !mode.equals("streaming")) {
            throw new IllegalArgumentException("--mode must be incremental-snapshot or streaming, not " + mode);
        }
        this.snapshotMode = mode.equals("incremental-snapshot");
        String countTable = opt("count-table", tables().get(0));
        this.countTopic = req("topic-prefix") + "." + countTable;
        this.expected = Long.parseLong(req("expected"));
        // In streaming mode every change of the count table counts from the start; in incremental-snapshot mode only
        // the snapshot records read after the signal (op=r; nothing else emits them once the engine streams).
        this.countingEnabled = !snapshotMode;
    }

    // ------------------------------------------------------------------------------------------------ options

    private String opt(String name, String def) {
        String v = opts.get(name);
        if (v == null) {
            v = System.getenv("DBZ_" + name.toUpperCase(Locale.ROOT).replace('-', '_'));
        }
        return (v == null || v.isEmpty()) ? def : v;
    }

    private String req(String name) {
        String v = opt(name, null);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + name);
        }
        return v;
    }

    private List<String> tables() {
        List<String> out = new ArrayList<>();
        for (String t : req("tables").split(",")) {
            if (!t.isBlank()) {
                out.add(t.trim());
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--tables is empty");
        }
        return out;
    }

    private static void out(String line) {
        System.out.println(PREFIX + line);
        System.out.flush();
    }

    private static long nowUs() {
        Instant i = Instant.now();
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
    }

    private static long cpuNs() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return -1;
    }

    private static long statusKb(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
                }
            }
        }
        catch (IOException | RuntimeException e) {
            // not Linux: no figure
        }
        return -1;
    }

    // ------------------------------------------------------------------------------------------------ properties

    private Properties connectorProperties() {
        Properties p = new Properties();
        String prefix = req("topic-prefix");
        p.setProperty("name", opt("engine-name", prefix));
        p.setProperty("topic.prefix", prefix);
        p.setProperty("database.hostname", opt("host", "127.0.0.1"));
        p.setProperty("database.port", req("port"));
        p.setProperty("database.user", req("user"));
        p.setProperty("database.password", req("password"));
        p.setProperty("table.include.list", String.join(",", tables()));
        // JSON without schemas, records shaped like Tidemark's.
        p.setProperty("converter.schemas.enable", "false");
        p.setProperty("key.converter.schemas.enable", "false");
        p.setProperty("value.converter.schemas.enable", "false");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        p.setProperty("offset.storage.file.filename", req("offset-file"));
        p.setProperty("offset.flush.interval.ms", opt("offset-flush-ms", "1000"));
        p.setProperty("errors.max.retries", "0");
        String chunk = opt("chunk-size", null);
        if (chunk != null) {
            p.setProperty("incremental.snapshot.chunk.size", chunk);
        }
        String signal = opt("signal-table", null);
        if (signal != null) {
            p.setProperty("signal.data.collection", signal);
            p.setProperty("signal.enabled.channels", "source");
        }
        if (kind.equals("postgres")) {
            p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
            p.setProperty("database.dbname", req("database"));
            p.setProperty("plugin.name", "pgoutput");
            p.setProperty("slot.name", req("slot"));
            p.setProperty("slot.drop.on.stop", "false");
            p.setProperty("publication.name", req("publication"));
            p.setProperty("publication.autocreate.mode", opt("publication-autocreate", "filtered"));
            // No initial data. Without offsets and with an existing slot (streaming: a copy of a template slot made
            // before the backlog) the connector streams from the slot's position; 3.6 no longer accepts "never".
            p.setProperty("snapshot.mode", opt("snapshot-mode", "no_data"));
        }
        else {
            p.setProperty("connector.class", "io.debezium.connector.mariadb.MariaDbConnector");
            p.setProperty("database.include.list", req("database"));
            p.setProperty("database.server.id", opt("server-id", String.valueOf(50000 + (ProcessHandle.current().pid() % 10000))));
            // The schema history only lives as long as this run; the recovery snapshot rebuilds it from the tables.
            p.setProperty("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory");
            p.setProperty("schema.history.internal.store.only.captured.tables.ddl", "true");
            p.setProperty("include.schema.changes", "false");
            // Shared server: no global read lock (Tidemark takes none either).
            p.setProperty("snapshot.locking.mode", "none");
            p.setProperty("snapshot.mode", opt("snapshot-mode", snapshotMode ? "no_data" : "recovery"));
        }
        for (String kv : extraProps) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--prop wants key=value, got " + kv);
            }
            p.setProperty(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
        }
        return p;
    }

    /**
     * MariaDB streaming: writes the offset file the engine will read (Kafka's FileOffsetBackingStore format: a
     * serialized HashMap of key bytes to value bytes, both JSON from the converter the engine uses for offsets).
     */
    private void seedOffsets(Properties p) throws IOException {
        String file = opt("start-file", null);
        if (file == null) {
            return;
        }
        String engineName = p.getProperty("name");
        Map<String, Object> partition = Map.of("server", p.getProperty("topic.prefix"));
        Map<String, Object> offset = new LinkedHashMap<>();
        offset.put("file", file);
        offset.put("pos", Long.parseLong(req("start-pos")));
        String gtids = opt("start-gtids", null);
        if (gtids != null) {
            offset.put("gtids", gtids);
        }
        JsonConverter keyConv = new JsonConverter();
        keyConv.configure(Map.of("schemas.enable", "false"), true);
        JsonConverter valueConv = new JsonConverter();
        valueConv.configure(Map.of("schemas.enable", "false"), false);
        byte[] key = keyConv.fromConnectData(engineName, null, Arrays.asList(engineName, partition));
        byte[] value = valueConv.fromConnectData(engineName, null, offset);
        HashMap<byte[], byte[]> raw = new HashMap<>();
        raw.put(key, value);
        Path path = Path.of(p.getProperty("offset.storage.file.filename"));
        try (ObjectOutputStream os = new ObjectOutputStream(Files.newOutputStream(path))) {
            os.writeObject(raw);
        }
        out("seeded offsets " + new String(key, StandardCharsets.UTF_8) + " -> " + new String(value, StandardCharsets.UTF_8));
    }

    // ------------------------------------------------------------------------------------------------ Kafka leg

    private void openKafka() throws Exception {
        String bootstrap = req("bootstrap");
        Properties pp = new Properties();
        pp.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.setProperty(ProducerConfig.ACKS_CONFIG, "all");
        pp.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        pp.setProperty(ProducerConfig.LINGER_MS_CONFIG, "5");
        pp.setProperty(ProducerConfig.CLIENT_ID_CONFIG, "tidemark-debezium-peer");
        producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer());
        Properties ap = new Properties();
        ap.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(ap);
        knownTopics.addAll(admin.listTopics().names().get(30, TimeUnit.SECONDS));
        autoPartitions = Integer.parseInt(opt("partitions", "1"));
    }

    /** A topic the script did not create (e.g. the signal table's): created once, like auto-creation would. */
    private void ensureTopic(String topic) throws InterruptedException {
        if (knownTopics.contains(topic)) {
            return;
        }
        try {
            admin.createTopics(List.of(new NewTopic(topic, autoPartitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
            out("created topic " + topic);
        }
        catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new RuntimeException("cannot create topic " + topic, e);
            }
        }
        catch (java.util.concurrent.TimeoutException e) {
            throw new RuntimeException("cannot create topic " + topic, e);
        }
        knownTopics.add(topic);
    }

    private static boolean isChange(String value, boolean snapshot) {
        if (value == null) {
            return false;  // tombstone
        }
        int i = value.lastIndexOf("\"op\":\"");
        if (i < 0 || i + 6 >= value.length()) {
            return false;
        }
        char op = value.charAt(i + 6);
        return snapshot ? op == 'r' : (op == 'c' || op == 'u' || op == 'd');
    }

    private void handleBatch(List<ChangeEvent<String, String>> records,
                             DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) throws InterruptedException {
        List<Future<RecordMetadata>> futures = new ArrayList<>(records.size());
        for (ChangeEvent<String, String> r : records) {
            String topic = r.destination();
            ensureTopic(topic);
            futures.add(producer.send(new ProducerRecord<>(topic, r.key(), r.value())));
        }
        long matched = 0;
        for (int i = 0; i < records.size(); i++) {
            try {
                futures.get(i).get();
            }
            catch (ExecutionException e) {
                fail(new RuntimeException("Kafka did not acknowledge a record: " + e.getCause(), e.getCause()));
                throw new InterruptedException("Kafka produce failed");
            }
            ChangeEvent<String, String> r = records.get(i);
            committer.markProcessed(r);
            if (countingEnabled && countTopic.equals(r.destination()) && isChange(r.value(), snapshotMode)) {
                matched++;
            }
        }
        committer.markBatchFinished();
        acknowledged.addAndGet(records.size());
        if (matched > 0) {
            firstUs.compareAndSet(0, nowUs());
            long n = counted.addAndGet(matched);
            if (n >= expected && doneUs.get() == 0) {
                doneUs.compareAndSet(0, nowUs());
                doneCpuNs.set(cpuNs());
                doneRssKb.set(statusKb("VmHWM"));
                finished.countDown();
            }
        }
    }

    private void fail(Throwable t) {
        failure.compareAndSet(null, t);
        finished.countDown();
    }

    // ------------------------------------------------------------------------------------------------ database side

    private Connection jdbc() throws Exception {
        String url = kind.equals("postgres")
                ? "jdbc:postgresql://" + opt("host", "127.0.0.1") + ":" + req("port") + "/" + req("database")
                : "jdbc:mariadb://" + opt("host", "127.0.0.1") + ":" + req("port") + "/" + req("database");
        return DriverManager.getConnection(url, opt("signal-user", req("user")), opt("signal-password", req("password")));
    }

    /** Inserts the execute-snapshot signal row; returns the time (epoch µs) just before the INSERT. */
    private long insertSignal() throws Exception {
        String signalTable = req("signal-table");
        String countTable = opt("count-table", tables().get(0));
        String id = opt("signal-id", req("topic-prefix") + "-snapshot");
        String data = "{\"data-collections\": [\"" + countTable + "\"], \"type\": \"incremental\"}";
        try (Connection c = jdbc();
             PreparedStatement st = c.prepareStatement("INSERT INTO " + signalTable + " (id, type, data) VALUES (?, ?, ?)")) {
            c.setAutoCommit(true);
            st.setString(1, id);
            st.setString(2, "execute-snapshot");
            st.setString(3, data);
            long t = nowUs();
            countingEnabled = true;
            st.executeUpdate();
            return t;
        }
    }

    /** Waits until a Debezium streaming-metrics MBean reports Connected=true. */
    private boolean waitStreaming(long deadlineMs) throws Exception {
        MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        ObjectName pattern = new ObjectName("debezium.*:type=connector-metrics,context=streaming,*");
        while (System.currentTimeMillis() < deadlineMs) {
            if (failure.get() != null) {
                return false;
            }
            for (ObjectName n : mbs.queryNames(pattern, null)) {
                try {
                    if (Boolean.TRUE.equals(mbs.getAttribute(n, "Connected"))) {
                        return true;
                    }
                }
                catch (Exception e) {
                    // not yet registered completely
                }
            }
            Thread.sleep(50);
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------------ run

    private int run() throws Exception {
        long jvmStartUs = ManagementFactory.getRuntimeMXBean().getStartTime() * 1000L;
        // --startup-timeout-s bounds the wait for streaming; --timeout-s the measured part (from the signal in
        // incremental-snapshot mode, from the JVM's start in streaming mode). On timeout the partial figures are printed.
        long startupDeadlineMs = System.currentTimeMillis() + Long.parseLong(opt("startup-timeout-s", "300")) * 1000L;
        long timeoutMs = Long.parseLong(opt("timeout-s", "1800")) * 1000L;
        Properties props = connectorProperties();
        Files.deleteIfExists(Path.of(props.getProperty("offset.storage.file.filename")));
        if (kind.equals("mariadb") && !snapshotMode) {
            seedOffsets(props);
        }
        openKafka();
        out("starting mode=" + mode + " kind=" + kind + " count_topic=" + countTopic + " expected=" + expected
                + " connector=" + props.getProperty("connector.class") + " snapshot.mode=" + props.getProperty("snapshot.mode")
                + " chunk=" + props.getProperty("incremental.snapshot.chunk.size", "default"));

        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
                .using(props)
                .using((success, message, error) -> {
                    if (!success || error != null) {
                        fail(error != null ? error : new RuntimeException(message));
                    }
                    else if (finished.getCount() > 0) {
                        fail(new RuntimeException("the engine stopped before the end: " + message));
                    }
                })
                .notifying(this::handleBatch)
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "debezium-engine");
            t.setDaemon(true);
            return t;
        });
        long engineStartUs = nowUs();
        executor.execute(engine);

        int status;
        long signalUs = 0;
        long signalCpuNs = 0;
        long streamingUs = 0;
        try {
            if (!waitStreaming(startupDeadlineMs)) {
                throw new IllegalStateException("the connector did not report streaming", failure.get());
            }
            streamingUs = nowUs();
            out("streaming at_us=" + streamingUs + " after_s=" + String.format(Locale.ROOT, "%.2f", (streamingUs - jvmStartUs) / 1e6));
            if (snapshotMode) {
                long delay = Long.parseLong(opt("signal-delay-ms", "0"));
                if (delay > 0) {
                    Thread.sleep(delay);
                }
                signalCpuNs = cpuNs();
                signalUs = insertSignal();
                out("signal inserted at_us=" + signalUs);
            }
            long waitMs = snapshotMode ? timeoutMs : Math.max(0, jvmStartUs / 1000 + timeoutMs - System.currentTimeMillis());
            boolean ended = finished.await(waitMs, TimeUnit.MILLISECONDS);
            if (failure.get() != null && doneUs.get() == 0) {
                throw new IllegalStateException("Debezium failed", failure.get());
            }
            status = ended ? 0 : 2;
        }
        catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            out("error " + e.getMessage() + (cause != e ? ": " + cause : ""));
            e.printStackTrace();
            status = 1;
        }

        if (status != 1) {
            long end = status == 0 ? doneUs.get() : nowUs();
            long cpu = status == 0 ? doneCpuNs.get() : cpuNs();
            long rss = status == 0 ? doneRssKb.get() : statusKb("VmHWM");
            long start = snapshotMode ? signalUs : jvmStartUs;
            long rows = counted.get();
            double seconds = (end - start) / 1e6;
            out(String.format(Locale.ROOT,
                    "result mode=%s kind=%s complete=%d rows=%d expected=%d seconds=%.3f rows_per_s=%.0f peak_rss_kb=%d "
                            + "cpu_s=%.2f window_cpu_s=%.2f start_us=%d done_us=%d first_us=%d jvm_start_us=%d engine_start_us=%d "
                            + "streaming_us=%d records_acked=%d",
                    mode, kind, status == 0 ? 1 : 0, rows, expected, seconds, seconds > 0 ? rows / seconds : 0.0, rss,
                    cpu / 1e9, (cpu - (snapshotMode ? signalCpuNs : 0)) / 1e9, start, end, firstUs.get(), jvmStartUs,
                    engineStartUs, streamingUs, acknowledged.get()));
        }

        // Shut down: the engine (bounded), then the producer.
        final int exitStatus = status;
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(60_000);
                System.err.println("debezium peer: shutdown took over 60 s; halting");
                Runtime.getRuntime().halt(exitStatus);
            }
            catch (InterruptedException ignored) {
                // normal exit
            }
        });
        killer.setDaemon(true);
        killer.start();
        try {
            engine.close();
        }
        catch (Exception e) {
            System.err.println("debezium peer: engine close: " + e);
        }
        executor.shutdown();
        executor.awaitTermination(30, TimeUnit.SECONDS);
        producer.close(java.time.Duration.ofSeconds(10));
        admin.close(java.time.Duration.ofSeconds(5));
        return status;
    }

    public static void main(String[] args) {
        Map<String, String> opts = new HashMap<>();
        List<String> props = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                System.err.println("debezium peer: unexpected argument " + a);
                System.exit(1);
            }
            String name;
            String value;
            int eq = a.indexOf('=');
            if (eq > 0) {
                name = a.substring(2, eq);
                value = a.substring(eq + 1);
            }
            else {
                name = a.substring(2);
                if (i + 1 >= args.length) {
                    System.err.println("debezium peer: --" + name + " needs a value");
                    System.exit(1);
                }
                value = args[++i];
            }
            if (name.equals("prop")) {
                props.add(value);
            }
            else {
                opts.put(name, value);
            }
        }
        String env = System.getenv("DBZ_PROPS");
        if (env != null) {
            for (String kv : env.trim().split("\\s+")) {
                if (!kv.isEmpty()) {
                    props.add(kv);
                }
            }
        }
        int status;
        try {
            status = new DebeziumPeer(opts, props).run();
        }
        catch (Throwable t) {
            out("error " + t);
            t.printStackTrace();
            status = 1;
        }
        System.exit(status);
    }
}
