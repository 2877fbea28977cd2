/*
 * The writer half of the Java bridge (DeltaKernelBridge.java is the reader half and the protocol
 * loop), written from spec/bridge.md and spec/scenarios.md alone: the `actions` requests served
 * with delta-kernel-java's Transaction API.
 *
 *   create    version 0 through kernel's create-table transaction (TableManager.
 *             buildCreateTableTransaction: the vector's schema, partition columns and properties,
 *             its files as generateAppendActions adds, its domains through addDomainMetadata);
 *             where kernel cannot create that table (it refuses a property such as
 *             delta.isolationLevel, writes another protocol than the vector's, or the table
 *             carries app ids, which a create-table transaction sets none of) version 0 is written
 *             as the file scenarios.md describes, as the setup commits always are (not
 *             validated, no commitInfo added: kernel's Transaction API always adds its own).
 *   begin     the latest snapshot, or the one at `version` (time_travel); the transaction is
 *             built on it when the writer commits (Snapshot.buildUpdateTableTransaction), with
 *             the operation kernel names (WRITE, STREAMING UPDATE) or Manual Update, its only
 *             other update operation. A writer of a new table (CREATE TABLE where none exists)
 *             commits through a create-table transaction with its staged metaData.
 *   read      accepted and recorded nowhere: kernel's transactions record no reads.
 *   stage     adds through Transaction.getWriteContext + generateAppendActions (path, size,
 *             modificationTime, partition values as typed literals, stats through
 *             DataFileStatistics.deserializeFromJson); a txn through withTransactionId; a metaData
 *             that changes only the configuration through withTablePropertiesAdded / Removed;
 *             domainMetadata through addDomainMetadata / removeDomainMetadata. Everything else
 *             is UNSUPPORTED (below).
 *   commit    Transaction.commit: kernel's own commit loop and conflict resolution; its
 *             exceptions become the protocol's outcomes, then its post-commit hooks run.
 *   snapshot  a snapshot as the reader half reports it, plus app ids and domains asked by name
 *             (getLatestTransactionVersion, getDomainMetadata) for every app id and domain the
 *             vector names, and delta.rowTracking; kernel lists no tombstones: none are reported.
 *   checkpoint  Table.checkpoint (kernel's Checkpointer); checkpoints, clean_up_log and checksum
 *             read or delete the log's files, as scenarios.md defines those steps.
 *
 * Kernel's conflict exceptions carry no version: the winner reported is the first commit after
 * the read version holding the action the exception names (a protocol, a metaData, the same app
 * id at a version at least the writer's, the same domain, a remove of the same path), which is
 * the commit at which kernel's ConflictChecker, reading the winners in order, throws.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.ConcurrentTransactionException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.exceptions.MetadataChangedException;
import io.delta.kernel.exceptions.ProtocolChangedException;
import io.delta.kernel.exceptions.TableAlreadyExistsException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.exceptions.UnsupportedProtocolVersionException;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.statistics.DataFileStatistics;
import io.delta.kernel.transaction.CreateTableTransactionBuilder;
import io.delta.kernel.transaction.DataLayoutSpec;
import io.delta.kernel.transaction.UpdateTableTransactionBuilder;
import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.ByteType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.utils.CloseableIterable;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

final class KernelWrites {
  static final ObjectMapper JSON = DeltaKernelBridge.JSON;
  static final String ENGINE_INFO = "deltaspec-bridge";
  static final String NEWEST = "4.4.0"; // the profile whose rules a kernel writer is judged by

  /** The request is one kernel's public API cannot express: the vector is skipped. */
  static final class Unsupported extends RuntimeException {
    Unsupported(String message) {
      super(message);
    }
  }

  /** The request is out of order or malformed. */
  static final class BadRequest extends RuntimeException {
    BadRequest(String message) {
      super(message);
    }
  }

  /** One writer: its read snapshot and what it staged, in the forms kernel takes. */
  static final class Writer {
    final Snapshot read; // null: no table when it began
    final Operation operation;
    final List<JsonNode> adds = new ArrayList<>();
    String appId;
    long appVersion;
    final Map<String, String> propertiesAdded = new TreeMap<>();
    final Set<String> propertiesRemoved = new LinkedHashSet<>();
    boolean metadataStaged;
    final Map<String, String> domainsAdded = new LinkedHashMap<>();
    final Set<String> domainsRemoved = new LinkedHashSet<>();
    boolean finished;
    ObjectNode outcome; // the failed outcome of its begin, or null
    ObjectNode created; // the metaData of a new table's writer

    Writer(Snapshot read, Operation operation) {
      this.read = read;
      this.operation = operation;
    }
  }

  final Engine engine;
  Path root; // the table of the current vector, or null
  Integer maxRetries; // config.maxCommitAttempts: RETRY.MAX_ATTEMPTS counts the retries
  long now; // the clock of the last step (kernel writes with its own wall clock)
  final Map<String, Writer> writers = new HashMap<>();
  final Set<String> appIds = new LinkedHashSet<>(); // every app id the vector names
  final Set<String> domains = new LinkedHashSet<>(); // every domain the vector names

  KernelWrites(Engine engine) {
    this.engine = engine;
  }

  // --- create / close -----------------------------------------------------------------------

  void create(JsonNode setup) throws IOException {
    close();
    JsonNode profile = setup.path("profile");
    if (profile.isTextual() && !profile.asText().equals(NEWEST)) {
      throw new Unsupported("kernel is judged by delta-spark " + NEWEST + "'s rules only");
    }
    JsonNode attempts = setup.path("config").path("maxCommitAttempts");
    maxRetries = attempts.isIntegralNumber() ? attempts.asInt() : null; // retries after attempt 0
    root = Files.createTempDirectory("deltaspec-kernel-");
    JsonNode table = setup.path("table");
    ObjectNode metadata = null; // the metaData of the version before, for setup commits' defaults
    Map<String, JsonNode> files = new HashMap<>(); // live path -> partitionValues
    long version = 0;
    if (table.isObject()) {
      try {
        createVersionZero(table);
      } catch (Unsupported notKernels) { // the table kernel cannot create: version 0 as a file
        System.err.println("create: version 0 written as a file: " + notKernels.getMessage());
        deleteAll(logPath());
        writeCommit(0, versionZero(table));
      }
      for (JsonNode line : commitLines(0)) {
        if (line.has("metaData")) {
          metadata = (ObjectNode) line.get("metaData");
        }
      }
      for (JsonNode file : table.path("files")) {
        files.put(file.get("path").asText(), file.path("partition"));
      }
      table.path("app_txns").fieldNames().forEachRemaining(appIds::add);
      table.path("domains").fieldNames().forEachRemaining(domains::add);
      version = 1;
    }
    for (JsonNode commit : setup.path("commits")) {
      StringBuilder lines = new StringBuilder();
      for (JsonNode action : commit) {
        ObjectNode resolved = resolve(action, metadata, files, 0);
        String kind = resolved.fieldNames().next();
        JsonNode body = resolved.get(kind);
        switch (kind) {
          case "add":
            files.put(body.get("path").asText(), body.path("partitionValues"));
            break;
          case "remove":
            files.remove(body.get("path").asText());
            break;
          case "metaData":
            metadata = (ObjectNode) body;
            break;
          case "txn":
            appIds.add(body.get("appId").asText());
            break;
          case "domainMetadata":
            domains.add(body.get("domain").asText());
            break;
          default:
            break;
        }
        lines.append(JSON.writeValueAsString(resolved)).append('\n');
      }
      writeLines(version++, lines.toString());
    }
  }

  /** A commit file as a setup writes it: the actions as given, at clock 0. */
  void writeCommit(long version, List<ObjectNode> actions) throws IOException {
    StringBuilder lines = new StringBuilder();
    for (ObjectNode action : actions) {
      lines.append(JSON.writeValueAsString(action)).append('\n');
    }
    writeLines(version, lines.toString());
  }

  void writeLines(long version, String lines) throws IOException {
    Path file = commitFile(version);
    Files.createDirectories(file.getParent());
    Files.write(file, lines.getBytes(StandardCharsets.UTF_8));
    Files.setLastModifiedTime(file, FileTime.fromMillis(0)); // written at clock 0
  }

  /** The creating commit of scenarios.md ("The initial table"), as its actions. */
  static List<ObjectNode> versionZero(JsonNode table) {
    List<ObjectNode> actions = new ArrayList<>();
    ObjectNode info = JSON.createObjectNode();
    info.putObject("commitInfo").put("timestamp", 0).put("operation", "CREATE TABLE")
        .put("isBlindAppend", false).putObject("operationParameters");
    actions.add(info);
    actions.add((ObjectNode) JSON.createObjectNode().set("protocol",
        table.has("protocol") ? table.get("protocol") : defaultProtocol()));
    ObjectNode metadata = newMetadata();
    metadata.put("schemaString", schemaString(table.get("schema")));
    if (table.has("partition_columns")) {
      metadata.set("partitionColumns", table.get("partition_columns"));
    }
    if (table.has("properties")) {
      metadata.set("configuration", table.get("properties"));
    }
    actions.add((ObjectNode) JSON.createObjectNode().set("metaData", metadata));
    for (JsonNode file : table.path("files")) {
      ObjectNode add = JSON.createObjectNode();
      add.put("path", file.get("path").asText());
      add.set(
          "partitionValues",
          file.has("partition") ? file.get("partition") : JSON.createObjectNode());
      add.put("size", 1).put("modificationTime", 0).put("dataChange", true);
      actions.add((ObjectNode) JSON.createObjectNode().set("add", add));
    }
    table.path("app_txns").fields().forEachRemaining(e -> {
      ObjectNode txn = JSON.createObjectNode().put("appId", e.getKey());
      txn.put("version", e.getValue().asLong());
      actions.add((ObjectNode) JSON.createObjectNode().set("txn", txn));
    });
    table.path("domains").fields().forEachRemaining(e -> {
      ObjectNode domain = JSON.createObjectNode().put("domain", e.getKey());
      domain.put("configuration", e.getValue().asText()).put("removed", false);
      actions.add((ObjectNode) JSON.createObjectNode().set("domainMetadata", domain));
    });
    return actions;
  }

  /** Kernel's create-table transaction for this table: schema, partitioning and properties. */
  CreateTableTransactionBuilder createTable(
      StructType schema, List<Column> partitions, Map<String, String> properties) {
    CreateTableTransactionBuilder builder =
        TableManager.buildCreateTableTransaction(root.toString(), schema, ENGINE_INFO);
    if (!properties.isEmpty()) {
      builder = builder.withTableProperties(properties);
    }
    if (!partitions.isEmpty()) {
      builder = builder.withDataLayoutSpec(DataLayoutSpec.partitioned(partitions));
    }
    return builder;
  }

  /** Version 0 of scenarios.md ("The initial table") as kernel's create-table transaction. */
  void createVersionZero(JsonNode table) throws IOException {
    if (table.path("app_txns").size() > 0) {
      throw new Unsupported("a create-table transaction sets no app id (table.app_txns)");
    }
    StructType schema = schema(table.get("schema"));
    List<Column> partitions = new ArrayList<>();
    table.path("partition_columns").forEach(name -> partitions.add(new Column(name.asText())));
    Map<String, String> properties = new TreeMap<>();
    table.path("properties").fields()
        .forEachRemaining(e -> properties.put(e.getKey(), e.getValue().asText()));
    Transaction txn;
    try {
      txn = createTable(schema, partitions, properties).build(engine);
      table.path("domains").fields()
          .forEachRemaining(e -> txn.addDomainMetadata(e.getKey(), e.getValue().asText()));
    } catch (RuntimeException refused) {
      throw new Unsupported(REFUSES + DeltaKernelBridge.describe(refused));
    }
    List<JsonNode> adds = new ArrayList<>();
    for (JsonNode file : table.path("files")) {
      ObjectNode add = JSON.createObjectNode();
      add.put("path", file.get("path").asText());
      add.set("partitionValues", file.path("partition"));
      add.put("size", 1);
      add.put("modificationTime", 0);
      adds.add(add);
    }
    try {
      TransactionCommitResult result = txn.commit(engine, appendActions(txn, adds));
      runHooks(result);
    } catch (RuntimeException refused) {
      throw new Unsupported(REFUSES + DeltaKernelBridge.describe(refused));
    }
    JsonNode wanted = table.has("protocol") ? table.get("protocol") : defaultProtocol();
    JsonNode written = DeltaKernelBridge.protocolJson(latest().getProtocol());
    if (!sameProtocol(wanted, written)) {
      throw new Unsupported(
          "kernel's create-table transaction writes the protocol " + written
              + ", not the vector's " + wanted);
    }
  }

  static final String REFUSES = "kernel's create-table transaction refuses this table: ";

  static JsonNode defaultProtocol() {
    ObjectNode protocol = JSON.createObjectNode();
    protocol.put("minReaderVersion", 1);
    protocol.put("minWriterVersion", 2);
    return protocol;
  }

  /** Versions equal, feature lists equal as sets (absent: none). */
  static boolean sameProtocol(JsonNode a, JsonNode b) {
    return a.path("minReaderVersion").asInt() == b.path("minReaderVersion").asInt()
        && a.path("minWriterVersion").asInt() == b.path("minWriterVersion").asInt()
        && names(a.path("readerFeatures")).equals(names(b.path("readerFeatures")))
        && names(a.path("writerFeatures")).equals(names(b.path("writerFeatures")));
  }

  static Set<String> names(JsonNode list) {
    Set<String> out = new java.util.TreeSet<>();
    list.forEach(item -> out.add(item.asText()));
    return out;
  }

  void close() throws IOException {
    writers.clear();
    appIds.clear();
    domains.clear();
    if (root != null) {
      deleteAll(root);
    }
    root = null;
  }

  static void deleteAll(Path top) throws IOException {
    if (Files.exists(top)) {
      try (Stream<Path> walk = Files.walk(top)) {
        walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }

  Path logPath() {
    return root.resolve("_delta_log");
  }

  Path commitFile(long version) {
    return logPath().resolve(String.format("%020d.json", version));
  }

  Table table() {
    if (root == null) {
      throw new BadRequest("no table: send create first");
    }
    return Table.forPath(engine, root.toString());
  }

  Snapshot latest() {
    return table().getLatestSnapshot(engine);
  }

  // --- begin / read / stage ---------------------------------------------------------------

  /** null, or the failed outcome. */
  JsonNode begin(String name, JsonNode spec, JsonNode version) {
    if (writers.containsKey(name)) {
      throw new BadRequest("writer " + name + " began already");
    }
    Snapshot read;
    boolean at = version.isIntegralNumber();
    try {
      read = at && version.asLong() >= 0
          ? table().getSnapshotAsOfVersion(engine, version.asLong())
          : latest();
      if (at && version.asLong() < 0) {
        throw new Unsupported("begin at version -1 of an existing table");
      }
    } catch (UnsupportedTableFeatureException | UnsupportedProtocolVersionException refused) {
      // kernel loads no snapshot of a table whose protocol it does not support: it writes none
      return failedBegin(name, "UNSUPPORTED_WRITE_PROTOCOL", refused);
    } catch (TableNotFoundException none) {
      if (at && version.asLong() >= 0) {
        return failedBegin(name, "TABLE_NOT_FOUND", none);
      }
      read = null; // a writer of a new table: it commits through a create-table transaction
    } catch (Unsupported declined) {
      throw declined;
    } catch (RuntimeException missing) {
      if (!DeltaKernelBridge.classify(missing).equals("VERSION_NOT_FOUND")) {
        throw missing;
      }
      return failedBegin(name, "VERSION_NOT_FOUND", missing);
    }
    String operation = spec.path("operation").asText("WRITE");
    Operation kernel;
    switch (operation) {
      case "WRITE":
        kernel = Operation.WRITE;
        break;
      case "STREAMING UPDATE":
        kernel = Operation.STREAMING_UPDATE;
        break;
      case "CREATE TABLE":
        kernel = Operation.CREATE_TABLE;
        break;
      default:
        kernel = Operation.MANUAL_UPDATE; // kernel names no DELETE, UPDATE, MERGE, OPTIMIZE, ...
    }
    if ((kernel == Operation.CREATE_TABLE) != (read == null)) {
      throw new Unsupported(
          "kernel creates a table only where none exists, and only with CREATE TABLE");
    }
    writers.put(name, new Writer(read, kernel));
    return null;
  }

  JsonNode failedBegin(String name, String kind, RuntimeException error) {
    System.err.println("begin " + name + ": " + DeltaKernelBridge.describe(error));
    Writer failed = new Writer(null, Operation.WRITE);
    failed.outcome = JSON.createObjectNode().put("error", kind);
    writers.put(name, failed);
    return failed.outcome;
  }

  Writer writer(String name) {
    Writer writer = writers.get(name);
    if (writer == null) {
      throw new BadRequest("writer " + name + " has not begun");
    }
    return writer;
  }

  void read(String name, JsonNode read) {
    writer(name); // kernel's transactions record no reads (no read predicates, files or app ids)
  }

  void stage(String name, JsonNode actions, long now) throws IOException {
    Writer writer = writer(name);
    if (writer.outcome != null) {
      return; // its begin failed
    }
    Map<String, JsonNode> files = new HashMap<>(); // no removes are staged: none are needed
    ObjectNode metadata = readMetadata(writer);
    for (JsonNode action : actions) {
      ObjectNode resolved = resolve(action, metadata, files, now);
      String kind = resolved.fieldNames().next();
      JsonNode body = resolved.get(kind);
      switch (kind) {
        case "add":
          stageAdd(writer, (ObjectNode) body);
          break;
        case "txn":
          if (writer.read == null) {
            throw new Unsupported(
                "txn in a creating commit: a create-table transaction sets no app id");
          }
          if (writer.appId != null) {
            throw new Unsupported("a second txn: a kernel transaction sets one transaction id");
          }
          if (body.has("lastUpdated")) {
            throw new Unsupported("txn.lastUpdated: kernel sets it to the builder's start time");
          }
          writer.appId = body.get("appId").asText();
          writer.appVersion = body.get("version").asLong();
          appIds.add(writer.appId);
          break;
        case "metaData":
          stageMetadata(writer, metadata, (ObjectNode) body);
          break;
        case "domainMetadata":
          String domain = body.get("domain").asText();
          domains.add(domain);
          if (writer.domainsAdded.containsKey(domain) || writer.domainsRemoved.contains(domain)) {
            throw new Unsupported(
                "a domain twice: a kernel transaction keeps one action per domain");
          }
          if (body.path("removed").asBoolean(false)) {
            writer.domainsRemoved.add(domain);
          } else {
            writer.domainsAdded.put(domain, body.path("configuration").asText(""));
          }
          break;
        case "remove":
          throw new Unsupported("remove: kernel 4.4.0's public API writes no remove actions");
        case "protocol":
          if (writer.read == null && sameProtocol(body, defaultProtocol())) {
            break; // the protocol kernel's create-table transaction writes for a plain table
          }
          throw new Unsupported(
              "protocol: kernel's public API stages no protocol action (it upgrades one only"
                  + " for the table features its properties name)");
        case "cdc":
          throw new Unsupported("cdc: kernel's public API writes no cdc actions");
        case "commitInfo":
          throw new BadRequest("a writer's commitInfo is the engine's own");
        default:
          throw new BadRequest("unknown action " + kind);
      }
    }
  }

  void stageAdd(Writer writer, ObjectNode add) {
    for (String field : List.of("tags", "deletionVector", "baseRowId", "defaultRowCommitVersion")) {
      if (add.has(field)) {
        throw new Unsupported("add." + field + ": generateAppendActions writes none");
      }
    }
    if (!add.path("dataChange").asBoolean(true)) {
      throw new Unsupported("add.dataChange false: generateAppendActions writes dataChange true");
    }
    writer.adds.add(add);
  }

  /** The read metadata as a JSON metaData action (kernel's, from its snapshot). */
  ObjectNode readMetadata(Writer writer) {
    if (writer.read == null) {
      return null;
    }
    io.delta.kernel.internal.actions.Metadata kernel = writer.read.getMetadata();
    ObjectNode metadata = JSON.createObjectNode();
    metadata.put("id", kernel.getId());
    kernel.getName().ifPresent(value -> metadata.put("name", value));
    kernel.getDescription().ifPresent(value -> metadata.put("description", value));
    metadata.put("schemaString", kernel.getSchemaString());
    metadata.putArray("partitionColumns");
    ArrayNode partitions = (ArrayNode) metadata.get("partitionColumns");
    writer.read.getPartitionColumnNames().forEach(partitions::add);
    ObjectNode configuration = metadata.putObject("configuration");
    new TreeMap<>(kernel.getConfiguration()).forEach(configuration::put);
    kernel.getCreatedTime().ifPresent(value -> metadata.put("createdTime", value));
    return metadata;
  }

  /** A metaData that changes the configuration only, as property additions and removals. */
  void stageMetadata(Writer writer, ObjectNode before, ObjectNode after) throws IOException {
    if (writer.metadataStaged) {
      throw new Unsupported("a second metaData: a kernel transaction writes one");
    }
    writer.metadataStaged = true;
    if (before == null) { // a new table: the create-table transaction takes it whole
      writer.created = after;
      return;
    }
    for (String field : List.of("id", "name", "description", "partitionColumns", "createdTime")) {
      if (!after.path(field).equals(before.path(field))) {
        throw new Unsupported(
            "metaData." + field + " changed: kernel's update transaction changes only the"
                + " schema (column mapping tables) and properties");
      }
    }
    JsonNode oldSchema = JSON.readTree(before.get("schemaString").asText());
    JsonNode newSchema = JSON.readTree(after.get("schemaString").asText());
    if (!oldSchema.equals(newSchema)) {
      throw new Unsupported(
          "metaData schema changed: kernel evolves a schema only on a column-mapping table");
    }
    JsonNode oldConf = before.path("configuration");
    JsonNode newConf = after.path("configuration");
    newConf.fields().forEachRemaining(e -> {
      if (!e.getValue().equals(oldConf.get(e.getKey()))) {
        writer.propertiesAdded.put(e.getKey(), e.getValue().asText());
      }
    });
    oldConf.fieldNames().forEachRemaining(key -> {
      if (!newConf.has(key)) {
        if (key.toLowerCase(java.util.Locale.ROOT).startsWith("delta.")) {
          throw new Unsupported("removing " + key + ": kernel removes user properties only");
        }
        writer.propertiesRemoved.add(key);
      }
    });
    if (writer.propertiesAdded.isEmpty() && writer.propertiesRemoved.isEmpty()) {
      throw new Unsupported("a metaData that changes nothing: kernel writes no metaData then");
    }
  }

  // --- commit -------------------------------------------------------------------------------

  JsonNode commit(String name) {
    Writer writer = writer(name);
    if (writer.outcome != null) {
      return writer.outcome; // its begin failed: it stays failed
    }
    if (writer.finished) {
      throw new BadRequest("writer " + name + " finished already");
    }
    writer.finished = true;
    if (writer.read == null) {
      return commitCreate(writer);
    }
    long readVersion = writer.read.getVersion();
    Transaction txn;
    try {
      UpdateTableTransactionBuilder builder =
          writer.read.buildUpdateTableTransaction(ENGINE_INFO, writer.operation);
      if (writer.appId != null) {
        builder = builder.withTransactionId(writer.appId, writer.appVersion);
      }
      if (!writer.propertiesAdded.isEmpty()) {
        builder = builder.withTablePropertiesAdded(writer.propertiesAdded);
      }
      if (!writer.propertiesRemoved.isEmpty()) {
        builder = builder.withTablePropertiesRemoved(writer.propertiesRemoved);
      }
      if (maxRetries != null) {
        builder = builder.withMaxRetries(maxRetries);
      }
      txn = builder.build(engine);
      writer.domainsAdded.forEach(txn::addDomainMetadata);
      writer.domainsRemoved.forEach(txn::removeDomainMetadata);
      TransactionCommitResult result = txn.commit(engine, appendActions(txn, writer.adds));
      runHooks(result);
      return committed(result.getVersion());
    } catch (RuntimeException failed) {
      return failure(failed, writer, readVersion);
    }
  }

  /** A new table's first commit: kernel's create-table transaction with the staged metaData. */
  JsonNode commitCreate(Writer writer) {
    if (writer.created == null) {
      throw new Unsupported(
          "a first commit without metaData: a create-table transaction needs a schema");
    }
    StructType schema;
    try {
      schema = schema(JSON.readTree(writer.created.get("schemaString").asText()).get("fields"));
    } catch (IOException | RuntimeException unreadable) {
      throw new Unsupported("a schema this bridge does not translate: " + unreadable);
    }
    List<Column> partitions = new ArrayList<>();
    writer.created.path("partitionColumns").forEach(c -> partitions.add(new Column(c.asText())));
    Map<String, String> properties = new TreeMap<>();
    writer.created.path("configuration").fields()
        .forEachRemaining(e -> properties.put(e.getKey(), e.getValue().asText()));
    try {
      CreateTableTransactionBuilder builder = createTable(schema, partitions, properties);
      if (maxRetries != null) {
        builder = builder.withMaxRetries(maxRetries);
      }
      Transaction txn = builder.build(engine);
      writer.domainsAdded.forEach(txn::addDomainMetadata);
      TransactionCommitResult result = txn.commit(engine, appendActions(txn, writer.adds));
      runHooks(result);
      return committed(result.getVersion());
    } catch (RuntimeException failed) {
      return failure(failed, writer, -1);
    }
  }

  ObjectNode committed(long version) {
    ObjectNode outcome = JSON.createObjectNode();
    outcome.put("committed", version);
    JsonNode info = commitInfo(version);
    if (info != null) {
      outcome.set("commit_info", info);
    }
    return outcome;
  }

  /** The adds as kernel's append actions: one write context per partition. */
  CloseableIterable<Row> appendActions(Transaction txn, List<JsonNode> adds) {
    Row state = txn.getTransactionState(engine);
    StructType schema = txn.getSchema(engine);
    List<Row> rows = new ArrayList<>();
    for (JsonNode add : adds) {
      Map<String, Literal> values = new HashMap<>(); // as given: kernel checks them
      add.path("partitionValues").fields().forEachRemaining(entry -> {
        String column = entry.getKey();
        JsonNode value = entry.getValue();
        DataType type = StringType.STRING; // a column the schema does not have
        for (StructField field : schema.fields()) {
          if (field.getName().equalsIgnoreCase(column)) {
            type = field.getDataType();
          }
        }
        // "" is null (ACTION.PARTITION_VALUES)
        boolean isNull = value.isNull() || value.asText().isEmpty();
        values.put(column, isNull ? Literal.ofNull(type) : literal(value.asText(), type));
      });
      var context = Transaction.getWriteContext(engine, state, values);
      Optional<DataFileStatistics> stats = Optional.empty();
      if (add.hasNonNull("stats")) {
        stats = DataFileStatistics.deserializeFromJson(add.get("stats").asText(), schema);
      }
      String path = root.toUri().resolve(add.get("path").asText()).toString();
      DataFileStatus status =
          new DataFileStatus(
              path, add.path("size").asLong(1), add.path("modificationTime").asLong(0), stats);
      try (CloseableIterator<Row> actions =
          Transaction.generateAppendActions(engine, state, iterator(List.of(status)), context)) {
        actions.forEachRemaining(rows::add);
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      }
    }
    return CloseableIterable.inMemoryIterable(iterator(rows));
  }

  static <T> CloseableIterator<T> iterator(List<T> items) {
    Iterator<T> inner = items.iterator();
    return new CloseableIterator<T>() {
      @Override
      public boolean hasNext() {
        return inner.hasNext();
      }

      @Override
      public T next() {
        return inner.next();
      }

      @Override
      public void close() {}
    };
  }

  void runHooks(TransactionCommitResult result) {
    for (PostCommitHook hook : result.getPostCommitHooks()) {
      try {
        hook.threadSafeInvoke(engine);
      } catch (IOException | RuntimeException error) { // a hook never fails the commit
        System.err.println("post-commit hook " + hook.getType() + " failed: " + error);
      }
    }
  }

  /** The commitInfo of the commit file of `version`, or null. */
  JsonNode commitInfo(long version) {
    for (JsonNode line : commitLines(version)) {
      if (line.has("commitInfo")) {
        return line.get("commitInfo");
      }
    }
    return null;
  }

  List<JsonNode> commitLines(long version) {
    List<JsonNode> lines = new ArrayList<>();
    Path file = commitFile(version);
    if (!Files.isRegularFile(file)) {
      return lines;
    }
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (!line.isBlank()) {
          lines.add(JSON.readTree(line));
        }
      }
    } catch (IOException error) {
      throw new UncheckedIOException(error);
    }
    return lines;
  }

  /** A kernel failure as an outcome of scenarios.md: a conflict with its winner, or an error. */
  JsonNode failure(RuntimeException failed, Writer writer, long readVersion) {
    ObjectNode outcome = JSON.createObjectNode();
    String message = DeltaKernelBridge.describe(failed);
    System.err.println("commit failed: " + message);
    String lower = message.toLowerCase(java.util.Locale.ROOT);
    if (failed instanceof ConcurrentTransactionException) {
      // against a winner, else at build: the read snapshot has the app id at that version already
      LineTest same = line -> line.has("txn")
          && line.get("txn").path("appId").asText().equals(writer.appId)
          && line.get("txn").path("version").asLong() >= writer.appVersion;
      long winner = firstWith(readVersion + 1, same);
      return conflict("CONCURRENT_TRANSACTION", winner >= 0 ? winner : firstWith(0, same), message);
    }
    if (failed instanceof ProtocolChangedException) {
      long winner = firstWith(readVersion + 1, line -> line.has("protocol"));
      return conflict("PROTOCOL_CHANGED", winner, message);
    }
    if (failed instanceof MetadataChangedException) {
      long winner = firstWith(readVersion + 1, line -> line.has("metaData"));
      return conflict("METADATA_CHANGED", winner, message);
    }
    if (failed instanceof ConcurrentWriteException) {
      if (lower.contains("domainmetadata action for the same domain")) {
        Set<String> mine = new LinkedHashSet<>(writer.domainsAdded.keySet());
        mine.addAll(writer.domainsRemoved);
        LineTest same = line -> line.has("domainMetadata")
            && mine.contains(line.get("domainMetadata").path("domain").asText());
        return conflict("CONCURRENT_TRANSACTION", firstWith(readVersion + 1, same), message);
      }
      if (lower.contains("also removes")) {
        return conflict("CONCURRENT_DELETE_DELETE", -1, message); // the bridge stages no removes
      }
      return conflict("CONCURRENT_WRITE", -1, message);
    }
    if (failed instanceof TableAlreadyExistsException) { // a creator that lost the race for 0
      return conflict("CONCURRENT_WRITE", firstWith(0, line -> true), message);
    }
    if (failed instanceof MaxCommitRetryLimitReachedException) {
      outcome.put("error", "MAX_COMMIT_RETRIES_EXCEEDED");
      return outcome;
    }
    String kind = errorKind(lower);
    if (kind == null) {
      throw failed; // not a kind of scenarios.md: the vector fails as an adapter error
    }
    outcome.put("error", kind);
    return outcome;
  }

  static final String[][] ERRORS = {
    {"file size must be non-negative", "INVALID_COMMIT_ACTION"}, // kernel's JSON writer refuses it
    {"partition values provided are not matching", "INVALID_PARTITIONING_SCHEMA"},
    {"without 'numrecords' statistics", "ROW_ID_ASSIGNMENT_WITHOUT_STATS"},
    {"append-only", "APPEND_ONLY_VIOLATION"},
    {"appendonly", "APPEND_ONLY_VIOLATION"},
    {"domain metadata", "DOMAIN_METADATA_UNSUPPORTED"},
    {"domainmetadata", "DOMAIN_METADATA_UNSUPPORTED"},
    {"unknownconfigurationexception", "INVALID_TABLE_PROPERTY"}, // any delta.isolationLevel too
    {"invalidconfigurationvalueexception", "INVALID_TABLE_PROPERTY"},
    {"unsupported", "UNSUPPORTED_WRITE_PROTOCOL"},
  };

  static String errorKind(String message) {
    for (String[] kind : ERRORS) {
      if (message.contains(kind[0])) {
        return kind[1];
      }
    }
    return null;
  }

  ObjectNode conflict(String kind, long winner, String message) {
    ObjectNode outcome = JSON.createObjectNode();
    outcome.put("conflict", kind);
    if (winner >= 0) {
      outcome.put("winner", winner);
    } else {
      System.err.println("no winner found for " + kind + ": " + message);
    }
    return outcome;
  }

  interface LineTest {
    boolean test(JsonNode line);
  }

  /** The first commit from version `from` on with a line passing `test`, or -1. */
  long firstWith(long from, LineTest test) {
    for (long version = from; Files.isRegularFile(commitFile(version)); version++) {
      for (JsonNode line : commitLines(version)) {
        if (test.test(line)) {
          return version;
        }
      }
    }
    return -1;
  }

  // --- snapshot ---------------------------------------------------------------------------

  JsonNode snapshot(JsonNode version) throws Exception {
    Snapshot snapshot;
    try {
      snapshot = version.isIntegralNumber()
          ? table().getSnapshotAsOfVersion(engine, version.asLong())
          : latest();
    } catch (TableNotFoundException none) {
      ObjectNode empty = JSON.createObjectNode();
      empty.put("version", -1);
      return empty;
    } catch (UnsupportedTableFeatureException | UnsupportedProtocolVersionException refused) {
      throw new Unsupported("kernel reads no snapshot of this table: " + refused.getMessage());
    } catch (RuntimeException missing) {
      if (!DeltaKernelBridge.classify(missing).equals("VERSION_NOT_FOUND")) {
        throw missing;
      }
      return JSON.createObjectNode(); // no snapshot at that version
    }
    List<Row> files = DeltaKernelBridge.liveFiles(engine, snapshot);
    ObjectNode result = DeltaKernelBridge.snapshotJson(snapshot, files);
    ObjectNode apps = result.putObject("app_txns");
    for (String appId : appIds) {
      snapshot.getLatestTransactionVersion(engine, appId).ifPresent(v -> apps.put(appId, v));
    }
    ObjectNode live = result.putObject("domains");
    Set<String> asked = new LinkedHashSet<>(domains);
    asked.add("delta.rowTracking"); // the domain kernel's row tracking writes itself
    for (String domain : asked) {
      snapshot.getDomainMetadata(domain).ifPresent(config -> live.put(domain, config));
    }
    return result;
  }

  void checkpoint(long version) throws IOException {
    table().checkpoint(engine, version); // kernel's Checkpointer: the checkpoint and its hint
  }

  /** A checkpoint file: classic, multi-part, or a v2 top-level file (spec/checkpoint.md). */
  static final java.util.regex.Pattern CHECKPOINT_FILE =
      java.util.regex.Pattern.compile(
          "^(\\d{20})\\.checkpoint"
              + "(\\.\\d+\\.\\d+\\.parquet|\\.[0-9a-f-]+\\.(parquet|json)|\\.parquet)$");

  /** The versions that have a checkpoint file in the log. */
  List<Long> checkpoints() throws IOException {
    java.util.TreeSet<Long> versions = new java.util.TreeSet<>();
    if (root != null && Files.isDirectory(logPath())) {
      try (Stream<Path> files = Files.list(logPath())) {
        files.forEach(file -> {
          var match = CHECKPOINT_FILE.matcher(file.getFileName().toString());
          if (match.matches()) {
            versions.add(Long.parseLong(match.group(1)));
          }
        });
      }
    }
    return new ArrayList<>(versions);
  }

  /**
   * scenarios.md's clean_up_log: every commit, checkpoint and checksum file of a version below a
   * checkpointed `version` deleted, as log cleanup leaves them once they expired (kernel's own
   * cleanup goes by file times against its retention, which a vector does not fix).
   */
  void cleanUpLog(long version) throws IOException {
    if (!checkpoints().contains(version)) {
      throw new BadRequest("clean_up_log " + version + ": that version has no checkpoint");
    }
    try (Stream<Path> files = Files.list(logPath())) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = file.getFileName().toString();
        name = name.startsWith(".") ? name.substring(1) : name; // Hadoop's .<file>.crc sidecars
        if (name.length() >= 20 && name.substring(0, 20).chars().allMatch(Character::isDigit)
            && Long.parseLong(name.substring(0, 20)) < version) {
          Files.delete(file);
        }
      }
    }
  }

  /** The checksum file kernel's post-commit hook wrote after the commit of `version`, or null. */
  JsonNode checksum(long version) throws IOException {
    Path crc = logPath().resolve(String.format("%020d.crc", version));
    return Files.isRegularFile(crc) ? JSON.readTree(crc.toFile()) : null;
  }

  // --- vectors' JSON as kernel's values -----------------------------------------------------

  /** One action with the defaults of scenarios.md ("Actions") filled in. */
  static ObjectNode resolve(
      JsonNode action, ObjectNode metadata, Map<String, JsonNode> files, long now) {
    String kind = action.fieldNames().next();
    ObjectNode body = ((ObjectNode) action.get(kind)).deepCopy();
    ObjectNode out = JSON.createObjectNode();
    switch (kind) {
      case "add":
        putIfAbsent(body, "partitionValues", JSON.createObjectNode());
        putIfAbsent(body, "size", JSON.getNodeFactory().numberNode(1));
        putIfAbsent(body, "modificationTime", JSON.getNodeFactory().numberNode(0));
        putIfAbsent(body, "dataChange", JSON.getNodeFactory().booleanNode(true));
        break;
      case "remove":
        putIfAbsent(body, "dataChange", JSON.getNodeFactory().booleanNode(true));
        putIfAbsent(body, "deletionTimestamp", JSON.getNodeFactory().numberNode(now));
        JsonNode live = files.get(body.get("path").asText());
        if (!body.has("partitionValues") && live != null) {
          body.set("partitionValues", live);
        }
        break;
      case "metaData":
        if (body.has("schema")) {
          body.put("schemaString", schemaString(body.remove("schema")));
        }
        ObjectNode full = metadata != null ? metadata.deepCopy() : newMetadata();
        full.setAll(body);
        body = full;
        break;
      case "domainMetadata":
        putIfAbsent(body, "configuration", JSON.getNodeFactory().textNode(""));
        putIfAbsent(body, "removed", JSON.getNodeFactory().booleanNode(false));
        break;
      case "cdc":
        putIfAbsent(body, "partitionValues", JSON.createObjectNode());
        putIfAbsent(body, "size", JSON.getNodeFactory().numberNode(1));
        putIfAbsent(body, "dataChange", JSON.getNodeFactory().booleanNode(false));
        break;
      default:
        break;
    }
    out.set(kind, body);
    return out;
  }

  static void putIfAbsent(ObjectNode body, String field, JsonNode value) {
    if (!body.has(field)) {
      body.set(field, value);
    }
  }

  static ObjectNode newMetadata() {
    ObjectNode metadata = JSON.createObjectNode();
    metadata.put("id", "kernel-bridge-table");
    metadata.putObject("format").put("provider", "parquet").putObject("options");
    metadata.putArray("partitionColumns");
    metadata.putObject("configuration");
    return metadata;
  }

  /** The Spark struct JSON of a list of columns (scenarios.md, "The initial table"). */
  static String schemaString(JsonNode columns) {
    ObjectNode struct = JSON.createObjectNode();
    struct.put("type", "struct");
    var fields = struct.putArray("fields");
    for (JsonNode column : columns) {
      ObjectNode field = fields.addObject();
      field.put("name", column.get("name").asText());
      field.put("type", column.get("type").asText());
      field.put("nullable", column.path("nullable").asBoolean(true));
      field.putObject("metadata");
    }
    return struct.toString();
  }

  static StructType schema(JsonNode columns) {
    List<StructField> fields = new ArrayList<>();
    for (JsonNode column : columns) {
      fields.add(new StructField(column.get("name").asText(), type(column.get("type").asText()),
          column.path("nullable").asBoolean(true)));
    }
    return new StructType(fields);
  }

  static DataType type(String name) {
    switch (name) {
      case "string":
        return StringType.STRING;
      case "long":
        return LongType.LONG;
      case "integer":
        return IntegerType.INTEGER;
      case "short":
        return ShortType.SHORT;
      case "byte":
        return ByteType.BYTE;
      case "boolean":
        return BooleanType.BOOLEAN;
      case "date":
        return DateType.DATE;
      case "timestamp":
        return TimestampType.TIMESTAMP;
      case "timestamp_ntz":
        return TimestampNTZType.TIMESTAMP_NTZ;
      case "double":
        return DoubleType.DOUBLE;
      case "float":
        return FloatType.FLOAT;
      case "binary":
        return BinaryType.BINARY;
      default:
        if (name.startsWith("decimal(")) {
          String[] ps = name.substring(8, name.length() - 1).split(",");
          return new DecimalType(Integer.parseInt(ps[0].trim()), Integer.parseInt(ps[1].trim()));
        }
        throw new BadRequest("unknown type " + name);
    }
  }

  /** A partition value (its serialized text) as a literal of the column's type. */
  static Literal literal(String text, DataType type) {
    if (type instanceof StringType) {
      return Literal.ofString(text);
    } else if (type instanceof LongType) {
      return Literal.ofLong(Long.parseLong(text));
    } else if (type instanceof IntegerType) {
      return Literal.ofInt(Integer.parseInt(text));
    } else if (type instanceof ShortType) {
      return Literal.ofShort(Short.parseShort(text));
    } else if (type instanceof ByteType) {
      return Literal.ofByte(Byte.parseByte(text));
    } else if (type instanceof BooleanType) {
      return Literal.ofBoolean(Boolean.parseBoolean(text));
    } else if (type instanceof DateType) {
      return Literal.ofDate((int) LocalDate.parse(text).toEpochDay());
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      String iso = text.replace(' ', 'T');
      java.time.Instant at;
      try {
        at = LocalDateTime.parse(iso).toInstant(ZoneOffset.UTC);
      } catch (java.time.format.DateTimeParseException zoned) {
        at = java.time.OffsetDateTime.parse(iso).toInstant();
      }
      long micros = at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000L;
      return type instanceof TimestampType
          ? Literal.ofTimestamp(micros)
          : Literal.ofTimestampNtz(micros);
    } else if (type instanceof DoubleType) {
      return Literal.ofDouble(Double.parseDouble(text));
    } else if (type instanceof FloatType) {
      return Literal.ofFloat(Float.parseFloat(text));
    } else if (type instanceof DecimalType) {
      DecimalType decimal = (DecimalType) type;
      BigDecimal value = new BigDecimal(text).setScale(decimal.getScale());
      return Literal.ofDecimal(value, decimal.getPrecision(), decimal.getScale());
    } else if (type instanceof BinaryType) {
      return Literal.ofBinary(text.getBytes(StandardCharsets.UTF_8));
    }
    throw new Unsupported("a partition column of type " + type);
  }
}
