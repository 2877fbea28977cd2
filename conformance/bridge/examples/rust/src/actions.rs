//! The `actions` capability of spec/bridge.md over delta-rs's `deltalake-core`: its own commit
//! path at action level. A writer's actions become deltalake-core `Action`s (their Delta JSON read
//! by deltalake-core's own serde), its operation a `DeltaOperation`, and `commit` runs
//! `CommitBuilder::build(..).await`: deltalake-core's protocol check, then its commit loop, which
//! on a version already taken runs its `ConflictChecker` against every newer commit and retries
//! (`with_max_retries`). Nothing here decides a conflict.
//!
//! What deltalake-core's checker takes of a transaction's reads (its `TransactionInfo`): the
//! operation's `read_predicate()` (a SQL string, which a build without the `datafusion` feature,
//! like this one, does not evaluate), the operation's `read_whole_table()` (true only for a MERGE
//! without predicate) and the app ids of the `txn` actions it commits. So a `filter` or `predicate`
//! read goes into the operation's predicate (for the operations that carry one), a `whole_table`
//! read is a MERGE without predicate, and an `app_id` read is the transaction's own `txn` of that
//! app id. Declined (`UNSUPPORTED`, the vector is skipped) is what none of these can carry: a read of
//! listed files, a whole-table read by another operation than MERGE, an app id read without a
//! `txn` of it, a `changes_data` other than the operation's own, operation names with no
//! `DeltaOperation`, a begin or snapshot at an older version, a profile other than the newest
//! (deltalake-core follows no delta-spark release), and a table whose protocol deltalake-core
//! cannot write (its `UnsupportedTableFeatures`), as a reader declines what it cannot read.
//!
//! The initial table and the setup commits are written as files, as scenarios.md says (they are not
//! validated); deltalake-core's commitInfo is its own (its timestamp from the wall clock: it takes
//! no clock). A deltalake-core failure that is no outcome of scenarios.md (a log it cannot load)
//! is the error kind ENGINE_ERROR with its message. Its conflict errors name no winning commit:
//! with one commit in between it is that one, with more the commit is replayed, with the same
//! actions and operation, on copies of the log cut after each of them, and the first copy it
//! conflicts on names the winner.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use deltalake_core::kernel::transaction::{
    CommitBuilder, CommitConflictError, TableReference, TransactionError,
};
use deltalake_core::kernel::Action;
use deltalake_core::logstore::LogStoreRef;
use deltalake_core::protocol::{DeltaOperation, OutputMode, SaveMode};
use deltalake_core::table::config::TablePropertiesExt;
use deltalake_core::table::state::DeltaTableState;
use deltalake_core::{DeltaTableBuilder, DeltaTableError};
use futures::TryStreamExt;
use serde_json::{json, Map, Value};
use tokio::runtime::{Builder, Runtime};
use url::Url;

/// The delta-spark release whose vectors deltalake-core is judged on: the newest spec/ describes
/// (a vector without `profile` is for it too).
const NEWEST: &str = "4.4.0";
/// deltalake-core's default, when a vector sets no `maxCommitAttempts` (its DEFAULT_RETRIES).
const DEFAULT_RETRIES: usize = 15;
/// The id of version 0's metaData ("a fixed id chosen by the harness").
const TABLE_ID: &str = "00000000-0000-4000-8000-000000000000";

/// How a request failed: declined (`UNSUPPORTED`), refused as malformed (`BAD_REQUEST`), or
/// anything else (`INTERNAL`).
pub struct Failure {
    pub kind: &'static str,
    pub message: String,
}

fn unsupported(message: impl Into<String>) -> Failure {
    Failure {
        kind: "UNSUPPORTED",
        message: message.into(),
    }
}

fn bad_request(message: impl Into<String>) -> Failure {
    Failure {
        kind: "BAD_REQUEST",
        message: message.into(),
    }
}

fn internal(message: impl Into<String>) -> Failure {
    Failure {
        kind: "INTERNAL",
        message: message.into(),
    }
}

impl From<DeltaTableError> for Failure {
    fn from(error: DeltaTableError) -> Self {
        internal(describe(&error))
    }
}

/// An error and its causes, within 2000 characters.
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(" <- ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(2000).collect()
}

/// One writer: what `begin` loaded and what `read` and `stage` recorded.
struct Writer {
    operation: String,
    /// the read snapshot (None: no table when it began)
    state: Option<DeltaTableState>,
    read_version: i64,
    /// the predicates of its filter and predicate reads, as SQL
    predicates: Vec<String>,
    whole_table: bool,
    app_ids: Vec<String>,
    /// the operation and actions `stage` made
    staged: Option<(DeltaOperation, Vec<Action>)>,
    done: bool,
    /// the outcome of a begin deltalake-core failed (its later commit answers the same)
    failed: Option<Value>,
}

/// The table of the current vector: a fresh directory and deltalake-core's log store on it.
struct Table {
    dir: PathBuf,
    log_store: LogStoreRef,
    max_retries: usize,
    writers: HashMap<String, Writer>,
    /// every app id and domain the vector wrote or staged: deltalake-core answers them by name
    app_ids: BTreeSet<String>,
    domains: BTreeSet<String>,
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The bridge's writer side: one table at a time, a tokio runtime for deltalake-core's futures,
/// and the clock of the last step.
pub struct Actions {
    runtime: Runtime,
    table: Option<Table>,
    now: i64,
}

static TABLES: AtomicUsize = AtomicUsize::new(0);

fn log_store_at(dir: &Path) -> Result<LogStoreRef, Failure> {
    let url = Url::from_directory_path(dir)
        .map_err(|()| internal(format!("{}: not a directory path", dir.display())))?;
    Ok(DeltaTableBuilder::from_url(url)?.build()?.log_store())
}

fn commit_path(dir: &Path, version: i64) -> PathBuf {
    dir.join("_delta_log").join(format!("{version:020}.json"))
}

/// The latest version among the commit files of `dir` (-1: none).
fn latest_version(dir: &Path) -> i64 {
    let Ok(entries) = std::fs::read_dir(dir.join("_delta_log")) else {
        return -1;
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter_map(|name| {
            let stem = name.strip_suffix(".json")?;
            (stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()))
                .then(|| stem.parse::<i64>().ok())?
        })
        .max()
        .unwrap_or(-1)
}

fn write_commit(dir: &Path, version: i64, actions: &[Value]) -> Result<(), Failure> {
    std::fs::create_dir_all(dir.join("_delta_log")).map_err(|e| internal(e.to_string()))?;
    let mut text = String::new();
    for action in actions {
        text.push_str(&action.to_string());
        text.push('\n');
    }
    std::fs::write(commit_path(dir, version), text).map_err(|e| internal(e.to_string()))
}

/// The Spark struct JSON of a list of scenario columns.
fn schema_string(columns: &Value) -> String {
    let fields: Vec<Value> = columns
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|column| {
            json!({
                "name": column["name"],
                "type": column["type"],
                "nullable": column.get("nullable").and_then(Value::as_bool).unwrap_or(true),
                "metadata": {},
            })
        })
        .collect();
    json!({"type": "struct", "fields": fields}).to_string()
}

fn object(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// What a snapshot tells the defaults of scenarios.md: live file path -> partition values, and
/// the metaData (its JSON form; Null when there is none).
#[derive(Default)]
struct Resolution {
    live: BTreeMap<String, Value>,
    metadata: Value,
}

/// One scenario action with the defaults of scenarios.md filled in, in its Delta JSON form.
fn resolve(action: &Value, at: &Resolution, now: i64) -> Result<Value, Failure> {
    let Some((key, body)) = action.as_object().and_then(|o| o.iter().next()) else {
        return Err(bad_request(format!("not an action: {action}")));
    };
    let mut body = object(body);
    let defaults: Vec<(&str, Value)> = match key.as_str() {
        "add" => vec![
            ("partitionValues", json!({})),
            ("size", json!(1)),
            ("modificationTime", json!(0)),
            ("dataChange", json!(true)),
        ],
        "remove" => {
            let path = body.get("path").and_then(Value::as_str).unwrap_or("");
            let mut defaults = vec![
                ("dataChange", json!(true)),
                ("deletionTimestamp", json!(now)),
            ];
            if let Some(values) = at.live.get(path) {
                defaults.push(("partitionValues", values.clone()));
            }
            defaults
        }
        "domainMetadata" => vec![("configuration", json!("")), ("removed", json!(false))],
        "cdc" => vec![
            ("partitionValues", json!({})),
            ("size", json!(1)),
            ("dataChange", json!(false)),
        ],
        "metaData" | "protocol" | "txn" | "commitInfo" => vec![],
        other => return Err(bad_request(format!("unknown action {other}"))),
    };
    for (name, value) in defaults {
        body.entry(name.to_string()).or_insert(value);
    }
    if key == "metaData" {
        if let Some(columns) = body.remove("schema") {
            body.insert("schemaString".into(), json!(schema_string(&columns)));
        }
        let mut merged = match &at.metadata {
            Value::Object(previous) => previous.clone(),
            _ => object(&json!({
                "id": TABLE_ID, "format": {"provider": "parquet", "options": {}},
                "partitionColumns": [], "configuration": {},
            })),
        };
        merged.extend(body);
        body = merged;
    }
    Ok(json!({ key.as_str(): body }))
}

/// The state after `actions`, for the next setup commit's defaults.
fn apply(at: &mut Resolution, actions: &[Value]) {
    for action in actions {
        if let Some(add) = action.get("add") {
            let path = add["path"].as_str().unwrap_or("").to_string();
            at.live.insert(path, add["partitionValues"].clone());
        } else if let Some(remove) = action.get("remove") {
            at.live.remove(remove["path"].as_str().unwrap_or(""));
        } else if let Some(metadata) = action.get("metaData") {
            at.metadata = metadata.clone();
        }
    }
}

/// A predicate of scenarios.md (prefix form) as SQL text, and the columns it names.
fn sql(predicate: &Value, columns: &mut BTreeSet<String>) -> Result<String, Failure> {
    let parts = predicate
        .as_array()
        .filter(|parts| !parts.is_empty())
        .ok_or_else(|| bad_request(format!("not a predicate: {predicate}")))?;
    let op = parts[0].as_str().unwrap_or("");
    let mut column = || -> Result<String, Failure> {
        let name = parts
            .get(1)
            .and_then(Value::as_str)
            .ok_or_else(|| bad_request(format!("no column in {predicate}")))?;
        columns.insert(name.to_string());
        Ok(format!("\"{}\"", name.replace('"', "\"\"")))
    };
    Ok(match op {
        "true" => "TRUE".into(),
        "false" => "FALSE".into(),
        "=" | "!=" | "<" | "<=" | ">" | ">=" => {
            let name = column()?;
            format!(
                "{name} {op} {}",
                literal(parts.get(2).unwrap_or(&Value::Null))
            )
        }
        "in" => {
            let name = column()?;
            let items: Vec<String> = parts
                .get(2)
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(literal)
                .collect();
            format!("{name} IN ({})", items.join(", "))
        }
        "is_null" => format!("{} IS NULL", column()?),
        "is_not_null" => format!("{} IS NOT NULL", column()?),
        "not" => format!(
            "NOT ({})",
            sql(parts.get(1).unwrap_or(&Value::Null), columns)?
        ),
        "and" | "or" => {
            let joined: Vec<String> = parts[1..]
                .iter()
                .map(|part| sql(part, columns).map(|text| format!("({text})")))
                .collect::<Result<_, _>>()?;
            joined.join(if op == "and" { " AND " } else { " OR " })
        }
        other => return Err(bad_request(format!("unknown predicate form {other}"))),
    })
}

fn literal(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::String(text) => format!("'{}'", text.replace('\'', "''")),
        other => other.to_string(),
    }
}

/// The `DeltaOperation` a writer's operation name stands for, with its read predicate; None when
/// deltalake-core has none for it.
fn operation(
    name: &str,
    predicate: Option<String>,
    actions: &[Action],
    table_url: &Url,
) -> Option<DeltaOperation> {
    let removes = actions
        .iter()
        .any(|action| matches!(action, Action::Remove(remove) if remove.data_change));
    Some(match name {
        "WRITE" => DeltaOperation::Write {
            mode: if removes {
                SaveMode::Overwrite
            } else {
                SaveMode::Append
            },
            partition_by: None,
            predicate,
        },
        "DELETE" => DeltaOperation::Delete { predicate },
        "UPDATE" => DeltaOperation::Update { predicate },
        "MERGE" => DeltaOperation::Merge {
            merge_predicate: predicate.clone(),
            predicate,
            matched_predicates: vec![],
            not_matched_predicates: vec![],
            not_matched_by_source_predicates: vec![],
        },
        "OPTIMIZE" => DeltaOperation::Optimize {
            predicate,
            target_size: 104_857_600,
        },
        "SET TBLPROPERTIES" => DeltaOperation::SetTableProperties {
            properties: actions
                .iter()
                .find_map(|action| match action {
                    Action::Metadata(metadata) => Some(metadata.configuration().clone()),
                    _ => None,
                })
                .unwrap_or_default(),
        },
        "STREAMING UPDATE" => {
            let txn = actions.iter().find_map(|action| match action {
                Action::Txn(txn) => Some(txn),
                _ => None,
            });
            DeltaOperation::StreamingUpdate {
                output_mode: OutputMode::Append,
                query_id: txn.map(|txn| txn.app_id.clone()).unwrap_or_default(),
                epoch_id: txn.map_or(0, |txn| txn.version),
            }
        }
        // deltalake-core's operation for a protocol change
        "UPGRADE PROTOCOL" => DeltaOperation::AddFeature { name: vec![] },
        "ADD COLUMNS" => DeltaOperation::AddColumn { fields: vec![] },
        // deltalake-core's Create carries the protocol and metaData it creates with; without
        // both among the actions, its WRITE (what its own first writes record)
        "CREATE TABLE" => {
            let protocol = actions.iter().find_map(|action| match action {
                Action::Protocol(protocol) => Some(protocol.clone()),
                _ => None,
            });
            let metadata = actions.iter().find_map(|action| match action {
                Action::Metadata(metadata) => Some(metadata.clone()),
                _ => None,
            });
            match (protocol, metadata) {
                (Some(protocol), Some(metadata)) => DeltaOperation::Create {
                    mode: SaveMode::ErrorIfExists,
                    location: table_url.clone(),
                    protocol,
                    metadata,
                },
                _ => DeltaOperation::Write {
                    mode: SaveMode::Append,
                    partition_by: None,
                    predicate,
                },
            }
        }
        _ => return None,
    })
}

/// What deltalake-core's commit failure is in scenarios.md's terms.
enum Outcome {
    Conflict(&'static str),
    Error(&'static str),
}

fn outcome_of(error: &DeltaTableError) -> Result<Outcome, Failure> {
    let DeltaTableError::Transaction { source } = error else {
        return Ok(Outcome::Error("ENGINE_ERROR"));
    };
    Ok(match source {
        TransactionError::CommitConflict(conflict) => Outcome::Conflict(match conflict {
            CommitConflictError::ConcurrentAppend => "CONCURRENT_APPEND",
            CommitConflictError::ConcurrentDeleteRead => "CONCURRENT_DELETE_READ",
            CommitConflictError::ConcurrentDeleteDelete => "CONCURRENT_DELETE_DELETE",
            CommitConflictError::MetadataChanged => "METADATA_CHANGED",
            CommitConflictError::ConcurrentTransaction => "CONCURRENT_TRANSACTION",
            CommitConflictError::ProtocolChanged(_) => "PROTOCOL_CHANGED",
            CommitConflictError::UnsupportedWriterVersion(_)
            | CommitConflictError::UnsupportedReaderVersion(_) => {
                return Err(unsupported(format!(
                    "deltalake-core cannot write this table: {}",
                    describe(error)
                )))
            }
            _ => return Ok(Outcome::Error("ENGINE_ERROR")),
        }),
        TransactionError::MaxCommitAttempts(_) => Outcome::Error("MAX_COMMIT_RETRIES_EXCEEDED"),
        TransactionError::DeltaTableAppendOnly => Outcome::Error("APPEND_ONLY_VIOLATION"),
        TransactionError::UnsupportedTableFeatures(_)
        | TransactionError::TableFeaturesRequired(_) => {
            return Err(unsupported(format!(
                "deltalake-core cannot write this table: {}",
                describe(error)
            )))
        }
        _ => Outcome::Error("ENGINE_ERROR"),
    })
}

/// A failed load of the table: declined when deltalake-core's kernel cannot read its protocol
/// (as a reader declines UNSUPPORTED_FEATURE), else INTERNAL (`begin` makes it an ENGINE_ERROR).
fn declined_load(error: &DeltaTableError) -> Failure {
    // the kernel's Error::Unsupported (deltalake-core does not re-export the kernel's error type)
    if let DeltaTableError::KernelError(kernel) = error {
        if kernel.to_string().starts_with("Unsupported: ") {
            return unsupported(format!(
                "deltalake-core cannot read this table: {}",
                describe(error)
            ));
        }
    }
    internal(describe(error))
}

/// A deltalake-core failure that is no outcome of scenarios.md (a log it cannot load, say).
fn engine_error(error: &DeltaTableError) -> Value {
    json!({"error": "ENGINE_ERROR", "message": describe(error)})
}

fn param<'a>(params: &'a Value, name: &str) -> Result<&'a Value, Failure> {
    params
        .get(name)
        .ok_or_else(|| bad_request(format!("no {name}")))
}

fn writer_name(params: &Value) -> Result<String, Failure> {
    param(params, "writer")?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| bad_request("writer is not a string"))
}

impl Actions {
    pub fn new() -> Self {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime starts");
        Actions {
            runtime,
            table: None,
            now: 0,
        }
    }

    fn table(&mut self) -> Result<&mut Table, Failure> {
        self.table
            .as_mut()
            .ok_or_else(|| bad_request("no table: create comes first"))
    }

    fn clock(&mut self, params: &Value) {
        if let Some(now) = params.get("now").and_then(Value::as_i64) {
            self.now = now;
        }
    }

    /// One request of the actions capability; None when `method` is not one of them.
    pub fn answer(&mut self, method: &str, params: &Value) -> Option<Result<Value, Failure>> {
        self.clock(params);
        Some(match method {
            "create" => self.create(params).map(|()| Value::Null),
            "begin" => self.begin(params),
            "read" => self.read(params).map(|()| Value::Null),
            "stage" => self.stage(params).map(|()| Value::Null),
            "commit" => self.commit(params),
            "snapshot" => self.snapshot(params),
            "verify" => Ok(json!([])),
            "close" => {
                self.table = None;
                Ok(Value::Null)
            }
            _ => return None,
        })
    }

    fn create(&mut self, params: &Value) -> Result<(), Failure> {
        self.table = None;
        self.now = 0;
        let setup = param(params, "setup")?;
        if let Some(profile) = setup.get("profile").and_then(Value::as_str) {
            if profile != NEWEST {
                return Err(unsupported(format!(
                    "deltalake-core follows no delta-spark release: only the vectors of the \
                     newest ({NEWEST}) apply, not {profile}'s"
                )));
            }
        }
        let config = object(setup.get("config").unwrap_or(&Value::Null));
        let mut max_retries = DEFAULT_RETRIES;
        for (key, value) in &config {
            match key.as_str() {
                // delta-spark writes at most maxCommitAttempts + 1 times (RETRY.MAX_ATTEMPTS),
                // deltalake-core at most max_retries + 1 times
                "maxCommitAttempts" => {
                    max_retries = value
                        .as_u64()
                        .and_then(|m| usize::try_from(m).ok())
                        .ok_or_else(|| bad_request(format!("maxCommitAttempts {value}")))?
                }
                // deltalake-core has no such setting: it records every commit
                "skipRecordingEmptyCommits" => {}
                other => {
                    return Err(unsupported(format!(
                        "deltalake-core has no setting {other}"
                    )))
                }
            }
        }
        let serial = TABLES.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("rust-bridge-table-{}-{serial}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| internal(e.to_string()))?;
        let log_store = log_store_at(&dir)?;
        let mut table = Table {
            dir,
            log_store,
            max_retries,
            writers: HashMap::new(),
            app_ids: BTreeSet::new(),
            domains: BTreeSet::new(),
        };
        let mut at = Resolution::default();
        let mut version = 0;
        if let Some(spec) = setup.get("table").filter(|t| !t.is_null()) {
            let protocol = spec
                .get("protocol")
                .cloned()
                .unwrap_or(json!({"minReaderVersion": 1, "minWriterVersion": 2}));
            let mut actions = vec![
                json!({"commitInfo": {"timestamp": 0, "operation": "CREATE TABLE", "isBlindAppend": false}}),
                json!({"protocol": protocol}),
                json!({"metaData": {
                    "id": TABLE_ID,
                    "format": {"provider": "parquet", "options": {}},
                    "schemaString": schema_string(&spec["schema"]),
                    "partitionColumns": spec.get("partition_columns").cloned().unwrap_or(json!([])),
                    "configuration": spec.get("properties").cloned().unwrap_or(json!({})),
                }}),
            ];
            for file in spec
                .get("files")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                actions.push(json!({"add": {
                    "path": file["path"],
                    "partitionValues": file.get("partition").cloned().unwrap_or(json!({})),
                    "size": 1, "modificationTime": 0, "dataChange": true,
                }}));
            }
            for (app_id, txn_version) in object(spec.get("app_txns").unwrap_or(&Value::Null)) {
                actions.push(json!({"txn": {"appId": app_id, "version": txn_version}}));
            }
            for (domain, configuration) in object(spec.get("domains").unwrap_or(&Value::Null)) {
                actions.push(json!({"domainMetadata": {
                    "domain": domain, "configuration": configuration, "removed": false,
                }}));
            }
            table.learn(&actions);
            write_commit(&table.dir, 0, &actions)?;
            apply(&mut at, &actions);
            version = 1;
        }
        for commit in setup
            .get("commits")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let actions: Vec<Value> = commit
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|action| resolve(action, &at, 0))
                .collect::<Result<_, _>>()?;
            table.learn(&actions);
            write_commit(&table.dir, version, &actions)?;
            apply(&mut at, &actions);
            version += 1;
        }
        self.table = Some(table);
        Ok(())
    }

    fn begin(&mut self, params: &Value) -> Result<Value, Failure> {
        let name = writer_name(params)?;
        let spec = param(params, "spec")?;
        let operation = spec
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or("WRITE")
            .to_string();
        let asked = params.get("version").and_then(Value::as_i64);
        let runtime = &self.runtime;
        let table = self.table.as_mut().ok_or_else(|| bad_request("no table"))?;
        let latest = latest_version(&table.dir);
        match asked {
            None => {}
            Some(-1) if latest < 0 => {}
            Some(version) => {
                return Err(unsupported(format!(
                    "begin at version {version}: this bridge begins at the latest version only \
                     (no time_travel)"
                )))
            }
        }
        // the operation's own changesData flag, on a placeholder of that operation
        let url = table.log_store.root_url().clone();
        let Some(placeholder) = self::operation(&operation, None, &[], &url) else {
            return Err(unsupported(format!(
                "deltalake-core has no DeltaOperation for {operation}"
            )));
        };
        if let Some(changes_data) = spec.get("changes_data").and_then(Value::as_bool) {
            if changes_data != placeholder.changes_data() {
                return Err(unsupported(format!(
                    "changes_data {changes_data}: deltalake-core's {operation} has {}",
                    placeholder.changes_data()
                )));
            }
        }
        let mut failed = None;
        let state = if latest < 0 {
            None
        } else {
            match runtime.block_on(DeltaTableState::try_new(table.log_store.as_ref(), None)) {
                Ok(state) => Some(state),
                Err(error) => {
                    let declined = declined_load(&error);
                    if declined.kind == "UNSUPPORTED" {
                        return Err(declined);
                    }
                    failed = Some(engine_error(&error));
                    None
                }
            }
        };
        let read_version = state.as_ref().map_or(-1, |state| state.version() as i64);
        table.writers.insert(
            name,
            Writer {
                operation,
                state,
                read_version,
                predicates: vec![],
                whole_table: false,
                app_ids: vec![],
                staged: None,
                done: false,
                failed: failed.clone(),
            },
        );
        Ok(failed.unwrap_or(Value::Null))
    }

    fn read(&mut self, params: &Value) -> Result<(), Failure> {
        let name = writer_name(params)?;
        let read = param(params, "read")?;
        let table = self.table()?;
        let writer = table
            .writers
            .get_mut(&name)
            .ok_or_else(|| bad_request(format!("{name} has not begun")))?;
        let partition_columns: BTreeSet<String> = writer
            .state
            .as_ref()
            .map(|state| {
                state
                    .metadata()
                    .partition_columns()
                    .iter()
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if read.get("files").is_some() {
            return Err(unsupported(
                "a read of listed files: deltalake-core's conflict checker takes no read files \
                 (it reads the files its operation's predicate matches, else the whole snapshot)",
            ));
        }
        if read.get("whole_table").and_then(Value::as_bool) == Some(true) {
            if writer.operation != "MERGE" {
                return Err(unsupported(format!(
                    "a whole-table read by {}: deltalake-core's operations read the whole table \
                     only as a MERGE without predicate",
                    writer.operation
                )));
            }
            writer.whole_table = true;
        }
        if let Some(app_id) = read.get("app_id").and_then(Value::as_str) {
            writer.app_ids.push(app_id.to_string());
        }
        if let Some(filter) = read.get("filter").and_then(Value::as_array) {
            // the AND of its partition-only elements (TRUE if none), as PREDICATE.PARTITION_ONLY
            let mut parts = Vec::new();
            for element in filter {
                let mut named = BTreeSet::new();
                let text = sql(element, &mut named)?;
                if named.is_subset(&partition_columns) {
                    parts.push(format!("({text})"));
                }
            }
            writer.predicates.push(if parts.is_empty() {
                "TRUE".into()
            } else {
                parts.join(" AND ")
            });
        }
        if let Some(predicate) = read.get("predicate") {
            writer
                .predicates
                .push(sql(predicate, &mut BTreeSet::new())?);
        }
        Ok(())
    }

    fn stage(&mut self, params: &Value) -> Result<(), Failure> {
        let name = writer_name(params)?;
        let now = self.now;
        let given: Vec<Value> = param(params, "actions")?
            .as_array()
            .cloned()
            .ok_or_else(|| bad_request("actions is not a list"))?;
        let table = self.table()?;
        let url = table.log_store.root_url().clone();
        let writer = table
            .writers
            .get(&name)
            .ok_or_else(|| bad_request(format!("{name} has not begun")))?;
        let mut at = Resolution::default();
        if let Some(state) = &writer.state {
            for file in state.log_data().iter() {
                let values: Map<String, Value> = file
                    .partition_values_map()
                    .into_iter()
                    .map(|(column, value)| (column, json!(value)))
                    .collect();
                at.live
                    .insert(file.path().to_string(), Value::Object(values));
            }
            at.metadata = serde_json::to_value(state.metadata())
                .map_err(|e| internal(format!("metaData as JSON: {e}")))?;
        }
        let resolved: Vec<Value> = given
            .iter()
            .map(|action| resolve(action, &at, now))
            .collect::<Result<_, _>>()?;
        let actions: Vec<Action> = resolved
            .iter()
            .map(|action| {
                serde_json::from_value::<Action>(action.clone()).map_err(|e| {
                    internal(format!(
                        "deltalake-core does not take the action {action}: {e}"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let own_txns: BTreeSet<&str> = actions
            .iter()
            .filter_map(|action| match action {
                Action::Txn(txn) => Some(txn.app_id.as_str()),
                _ => None,
            })
            .collect();
        if let Some(app_id) = writer
            .app_ids
            .iter()
            .find(|app_id| !own_txns.contains(app_id.as_str()))
        {
            return Err(unsupported(format!(
                "a read of app id {app_id} without a txn of it: deltalake-core's conflict \
                 checker takes as read app ids only those of the transaction's own txn actions"
            )));
        }
        let predicate = if writer.whole_table || writer.predicates.is_empty() {
            None
        } else if writer.predicates.len() == 1 {
            Some(writer.predicates[0].clone())
        } else {
            let parts: Vec<String> = writer.predicates.iter().map(|p| format!("({p})")).collect();
            Some(parts.join(" OR "))
        };
        let Some(operation) = operation(&writer.operation, predicate, &actions, &url) else {
            return Err(unsupported(format!(
                "deltalake-core has no DeltaOperation for {}",
                writer.operation
            )));
        };
        table.learn(&resolved);
        let writer = table.writers.get_mut(&name).expect("looked up above");
        writer.staged = Some((operation, actions));
        Ok(())
    }

    fn commit(&mut self, params: &Value) -> Result<Value, Failure> {
        let name = writer_name(params)?;
        let runtime = &self.runtime;
        let table = self.table.as_mut().ok_or_else(|| bad_request("no table"))?;
        let writer = table
            .writers
            .get(&name)
            .ok_or_else(|| bad_request(format!("{name} has not begun")))?;
        if let Some(failed) = &writer.failed {
            return Ok(failed.clone());
        }
        if writer.done {
            return Err(bad_request(format!("{name} has finished")));
        }
        let Some((operation, actions)) = writer.staged.clone() else {
            return Err(bad_request(format!("{name} has staged nothing")));
        };
        let latest = latest_version(&table.dir);
        let attempt = runtime.block_on(commit_once(
            table.log_store.clone(),
            writer.state.as_ref(),
            operation.clone(),
            actions.clone(),
            table.max_retries,
        ));
        let landed = latest_version(&table.dir);
        let result = match attempt {
            Ok(version) => committed(&table.dir, version),
            // the steps run one at a time: a new version is this commit's, written before the
            // failure (deltalake-core loads the new snapshot after writing)
            Err(error) if landed > latest => {
                eprintln!(
                    "deltalake-core wrote version {landed}, then failed: {}",
                    describe(&error)
                );
                committed(&table.dir, landed)
            }
            Err(error) => match outcome_of(&error)? {
                Outcome::Error(kind) => json!({"error": kind, "message": describe(&error)}),
                Outcome::Conflict(kind) => {
                    let winner = if latest == writer.read_version + 1 {
                        latest
                    } else {
                        first_winner(runtime, table, writer, &operation, &actions, latest)?
                    };
                    json!({"conflict": kind, "winner": winner, "message": describe(&error)})
                }
            },
        };
        table.writers.get_mut(&name).expect("looked up above").done = true;
        Ok(result)
    }

    fn snapshot(&mut self, params: &Value) -> Result<Value, Failure> {
        if params.get("version").is_some_and(|v| !v.is_null()) {
            return Err(unsupported(
                "a snapshot of an older version: this bridge reads the latest only (no time_travel)",
            ));
        }
        let now = self.now;
        let runtime = &self.runtime;
        let table = self.table.as_ref().ok_or_else(|| bad_request("no table"))?;
        if latest_version(&table.dir) < 0 {
            return Ok(json!({"version": -1}));
        }
        runtime.block_on(table.snapshot(now))
    }
}

impl Table {
    /// Remembers the app ids and domains of `actions` (JSON), which the snapshot asks for by name.
    fn learn(&mut self, actions: &[Value]) {
        for action in actions {
            if let Some(app_id) = action.pointer("/txn/appId").and_then(Value::as_str) {
                self.app_ids.insert(app_id.to_string());
            }
            if let Some(domain) = action
                .pointer("/domainMetadata/domain")
                .and_then(Value::as_str)
            {
                self.domains.insert(domain.to_string());
            }
        }
    }

    /// The snapshot JSON of spec/bridge.md, as deltalake-core loads the latest version.
    async fn snapshot(&self, now: i64) -> Result<Value, Failure> {
        let store = self.log_store.as_ref();
        let state = match DeltaTableState::try_new(store, None).await {
            Ok(state) => state,
            // a log deltalake-core cannot load (no metaData, say): no snapshot can be read
            Err(error @ DeltaTableError::KernelError(_)) => {
                eprintln!("deltalake-core cannot load the table: {}", describe(&error));
                return Ok(json!({}));
            }
            Err(error) => return Err(error.into()),
        };
        let mut files = Vec::new();
        let mut row_ids = Map::new();
        for file in state.log_data().iter() {
            #[allow(deprecated)] // the one public view of a file's row tracking fields
            let add = file.add_action();
            let path = file.path().to_string();
            row_ids.insert(
                path.clone(),
                json!([add.base_row_id, add.default_row_commit_version]),
            );
            files.push(path);
        }
        files.sort();
        // deltalake-core lists every remove of the log; those older than the table's
        // deletedFileRetentionDuration at the step's clock have expired (RETENTION.TOMBSTONES)
        let retention = state.table_config().deleted_file_retention_duration();
        let horizon = now - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        let tombstones: BTreeSet<String> = state
            .all_tombstones(store)
            .try_collect::<Vec<_>>()
            .await?
            .iter()
            .filter(|tombstone| tombstone.deletion_timestamp().is_none_or(|t| t >= horizon))
            .map(|tombstone| tombstone.path().to_string())
            .collect();
        let mut app_txns = Map::new();
        for app_id in &self.app_ids {
            if let Some(version) = state.transaction_version(store, app_id).await? {
                app_txns.insert(app_id.clone(), json!(version));
            }
        }
        let mut domains = Map::new();
        for domain in &self.domains {
            if let Some(configuration) = state.snapshot().domain_metadata(store, domain).await? {
                domains.insert(domain.clone(), json!(configuration));
            }
        }
        let metadata = state.metadata();
        let protocol = state.protocol();
        let names = |features: Option<&[_]>| {
            features.map(|features| features.iter().map(ToString::to_string).collect())
        };
        let protocol_json = crate::protocol_json(
            json!(protocol.min_reader_version()),
            json!(protocol.min_writer_version()),
            names(protocol.reader_features()),
            names(protocol.writer_features()),
        );
        Ok(json!({
            "version": state.version(),
            "files": files,
            "tombstones": tombstones,
            "app_txns": app_txns,
            "domains": domains,
            "properties": metadata.configuration(),
            "partition_columns": metadata.partition_columns(),
            "protocol": protocol_json,
            "row_ids": row_ids,
        }))
    }
}

/// One run of deltalake-core's commit: `CommitBuilder` with the actions, `build` on the read
/// snapshot (None: no table when the writer began) with the operation, awaited: its protocol
/// check, then its commit loop with conflict checks and retries. The version it committed.
async fn commit_once(
    log_store: LogStoreRef,
    state: Option<&DeltaTableState>,
    operation: DeltaOperation,
    actions: Vec<Action>,
    max_retries: usize,
) -> Result<i64, DeltaTableError> {
    let reference = state.map(|state| state as &dyn TableReference);
    let finalized = CommitBuilder::default()
        .with_actions(actions)
        .with_max_retries(max_retries)
        .build(reference, log_store, operation)
        .await?;
    Ok(finalized.version() as i64)
}

/// The outcome of a commit of `version`, with the commitInfo deltalake-core wrote in it.
fn committed(dir: &Path, version: i64) -> Value {
    let info = std::fs::read_to_string(commit_path(dir, version))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|action| action.get("commitInfo").cloned());
    match info {
        Some(info) => json!({"committed": version, "commit_info": info}),
        None => json!({"committed": version}),
    }
}

/// The first commit after the writer's read version that deltalake-core's checker fails it on:
/// the same commit replayed on copies of the log cut after each version in between (deltalake-core
/// names none).
fn first_winner(
    runtime: &Runtime,
    table: &Table,
    writer: &Writer,
    operation: &DeltaOperation,
    actions: &[Action],
    latest: i64,
) -> Result<i64, Failure> {
    for cut in writer.read_version + 1..latest {
        let copy = table.dir.with_file_name(format!(
            "{}-cut-{cut}",
            table.dir.file_name().unwrap_or_default().to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir_all(copy.join("_delta_log")).map_err(|e| internal(e.to_string()))?;
        for version in 0..=cut {
            std::fs::copy(
                commit_path(&table.dir, version),
                commit_path(&copy, version),
            )
            .map_err(|e| internal(e.to_string()))?;
        }
        let conflicted = runtime.block_on(async {
            let log_store = log_store_at(&copy)?;
            let read = u64::try_from(writer.read_version).unwrap_or(0);
            let state = DeltaTableState::try_new(log_store.as_ref(), Some(read)).await?;
            let attempt = commit_once(
                log_store,
                Some(&state),
                operation.clone(),
                actions.to_vec(),
                table.max_retries,
            )
            .await;
            Ok::<_, Failure>(matches!(
                attempt.as_ref().map_err(outcome_of),
                Err(Ok(Outcome::Conflict(_)))
            ))
        });
        let _ = std::fs::remove_dir_all(&copy);
        if conflicted? {
            return Ok(cut);
        }
    }
    Ok(latest)
}
