//! A bridge written from spec/bridge.md, spec/bridge/*.schema.json, spec/scenarios.md and
//! spec/log-vectors.md alone (it uses nothing of deltaspec): delta-kernel-rs, the Delta project's
//! Rust kernel, with its default engine, as a reader of tables on disk, and delta-rs's
//! deltalake-core as a writer at action level (src/actions.rs). build.sh beside this file builds it
//! (into the cache) and prints its command:
//!
//!     deltaspec conformance --adapter "cmd:sh conformance/bridge/examples/rust/run.sh" \
//!         --suite logs --known-issues conformance/harness/known_issues/delta-kernel-rs.json
//!
//! It speaks deltaspec-bridge/1: one JSON object per line on stdin, one answer per line on stdout
//! (nothing else is written there: both crates log through `tracing`, which has no subscriber
//! here, and a panic's message goes to stderr). It declares read_table, read_table_timestamp and
//! read_rows, served by the kernel, and actions, served by deltalake-core; other requests are
//! answered UNSUPPORTED. Its read_table reports no tombstones, app ids, domains or row ids:
//! kernel's public API lists none of them (it answers app ids and domains only by name), and a
//! reader is judged only on the keys it reports.

mod actions;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use delta_kernel::arrow::array::{Array, AsArray, GenericListArray, OffsetSizeTrait, RecordBatch};
use delta_kernel::arrow::datatypes::{
    DataType as ArrowType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use delta_kernel::arrow::error::ArrowError;
use delta_kernel::engine::arrow_data::ArrowEngineData;
use delta_kernel::history_manager::error::{LogHistoryError, NearestTimestamp};
use delta_kernel::history_manager::{latest_version_as_of, HistoryCommitType};
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::scan::state::ScanFile;
use delta_kernel::{Engine, KernelError, Snapshot, SnapshotRef};
use delta_kernel_default_engine::DefaultEngine;
use serde_json::{json, Map, Value};
use url::Url;

const PROTOCOL: &str = "deltaspec-bridge/1";
const KERNEL_VERSION: &str = "0.30.1"; // the exact versions Cargo.toml pins
const DELTALAKE_CORE_VERSION: &str = "1.1.3";
const CAPABILITIES: [&str; 4] = ["actions", "read_rows", "read_table", "read_table_timestamp"];

/// A failed read: an error kind of log-vectors.md (or INTERNAL) and the kernel's message.
struct ReadError {
    kind: &'static str,
    message: String,
}

impl From<KernelError> for ReadError {
    fn from(error: KernelError) -> Self {
        ReadError {
            kind: classify(&error, None),
            message: describe(&error),
        }
    }
}

impl ReadError {
    /// A failure of the read of `version` (None: the latest), which decides what the kernel's
    /// "version V is missing" means.
    fn of_read(error: KernelError, version: Option<u64>) -> Self {
        ReadError {
            kind: classify(&error, Some(version)),
            message: describe(&error),
        }
    }
}

fn main() {
    let engine: Arc<dyn Engine> =
        Arc::new(DefaultEngine::builder(Arc::new(LocalFileSystem::new())).build());
    let mut writes = actions::Actions::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let response = catch_unwind(AssertUnwindSafe(|| answer(&engine, &mut writes, &line)))
            .unwrap_or_else(|panic| {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|request| request.get("id").cloned())
                    .unwrap_or(Value::Null);
                failed(
                    id,
                    "INTERNAL",
                    &format!("the bridge panicked: {}", panic_text(&panic)),
                )
            });
        let text = serde_json::to_string(&response).expect("a JSON value serializes");
        if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
            break; // the driver went away
        }
    }
}

fn answer(engine: &Arc<dyn Engine>, writes: &mut actions::Actions, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(error) => return failed(Value::Null, "BAD_REQUEST", &format!("not JSON: {error}")),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "hello" => json!({
            "protocol": PROTOCOL,
            "name": format!(
                "delta-kernel-rs-{KERNEL_VERSION}+deltalake-core-{DELTALAKE_CORE_VERSION}"
            ),
            "capabilities": CAPABILITIES,
        }),
        "read_table" | "read_rows" => {
            let Some(path) = params.get("path").and_then(Value::as_str) else {
                return failed(id, "BAD_REQUEST", &format!("{method}: no path"));
            };
            let version = params.get("version").and_then(Value::as_u64);
            let timestamp = params.get("timestamp").and_then(Value::as_i64);
            let read = if method == "read_table" {
                read_table(engine, path, version, timestamp)
            } else {
                read_rows(engine, path, version, timestamp)
            };
            read.unwrap_or_else(|error| json!({"error": error.kind, "message": error.message}))
        }
        _ => match writes.answer(method, &params) {
            Some(Ok(result)) => result,
            Some(Err(failure)) => return failed(id, failure.kind, &failure.message),
            None => {
                return failed(
                    id,
                    "UNSUPPORTED",
                    &format!("{method}: not served by this bridge"),
                )
            }
        },
    };
    json!({"id": id, "result": result})
}

fn failed(id: Value, kind: &str, message: &str) -> Value {
    json!({"id": id, "error": {"kind": kind, "message": message}})
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The table's root as the directory URL the kernel takes: `path` made absolute against the
/// working directory, as written (no symbolic link resolved here).
fn table_url(path: &str) -> Result<Url, ReadError> {
    let absolute = std::path::absolute(path).map_err(|error| ReadError {
        kind: "INTERNAL",
        message: format!("{path}: {error}"),
    })?;
    Url::from_directory_path(&absolute).map_err(|()| ReadError {
        kind: "INTERNAL",
        message: format!("{}: not a directory path", absolute.display()),
    })
}

/// The snapshot a read asks for: the latest, a version, or (time travel by timestamp) the latest
/// version whose timestamp is at or before `timestamp`, as the kernel's history manager finds it.
fn load(
    engine: &Arc<dyn Engine>,
    path: &str,
    version: Option<u64>,
    timestamp: Option<i64>,
) -> Result<SnapshotRef, ReadError> {
    let url = table_url(path)?;
    let engine = engine.as_ref();
    if let Some(timestamp) = timestamp {
        let asked = timestamp_version(engine, &url, timestamp)?;
        return Snapshot::builder_for(url.as_str())
            .at_version(asked)
            .build(engine)
            .map_err(|error| ReadError::of_read(error, Some(asked)));
    }
    let mut builder = Snapshot::builder_for(url.as_str());
    if let Some(version) = version {
        builder = builder.at_version(version);
    }
    builder
        .build(engine)
        .map_err(|error| ReadError::of_read(error, version))
}

/// The version a read by timestamp reads: the kernel's `latest_version_as_of` on the latest
/// snapshot (the newest version whose timestamp is at or before `timestamp`).
fn timestamp_version(engine: &dyn Engine, url: &Url, timestamp: i64) -> Result<u64, ReadError> {
    let latest = Snapshot::builder_for(url.as_str())
        .build(engine)
        .map_err(|error| ReadError::of_read(error, None))?;
    let commit = latest_version_as_of(&latest, engine, timestamp, HistoryCommitType::Recreatable)?;
    Ok(commit.version)
}

/// One live file as the kernel's scan reports it.
struct LiveFile {
    path: String,
    size: i64,
    partition_values: HashMap<String, String>,
    deleted_rows: Option<u64>,
}

fn collect_file(files: &mut Vec<Result<LiveFile, String>>, file: ScanFile) {
    files.push(
        file.dv_info
            .cardinality()
            .map(|deleted_rows| LiveFile {
                path: file.path,
                size: file.size,
                partition_values: file.partition_values,
                deleted_rows,
            })
            .map_err(|error| error.to_string()),
    );
}

/// The snapshot JSON of spec/bridge.md for `read_table`: version, the live files (one entry per
/// logical file, in code point order), properties, partition columns and protocol; besides them
/// `x_file_details` (size, partition values, rows a deletion vector removes), which the driver
/// does not judge.
fn read_table(
    engine: &Arc<dyn Engine>,
    path: &str,
    version: Option<u64>,
    timestamp: Option<i64>,
) -> Result<Value, ReadError> {
    let snapshot = match load(engine, path, version, timestamp) {
        Err(error)
            if error.kind == "TABLE_NOT_FOUND" && version.is_none() && timestamp.is_none() =>
        {
            return Ok(json!({"version": -1, "files": []})); // the latest of no table: empty
        }
        loaded => loaded?,
    };
    let scan = snapshot.clone().scan_builder().build()?;
    let mut files: Vec<Result<LiveFile, String>> = Vec::new();
    for metadata in scan.scan_metadata(engine.as_ref())? {
        files = metadata?.visit_scan_files(files, collect_file)?;
    }
    let mut files = files
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|message| ReadError {
            kind: "INTERNAL",
            message,
        })?;
    files.sort_by(|a, b| a.path.cmp(&b.path)); // UTF-8 byte order is code point order
    let details: Vec<Value> = files
        .iter()
        .map(|file| {
            let partition: Map<String, Value> = file
                .partition_values
                .iter()
                .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
                .collect();
            json!({
                "path": file.path,
                "size": file.size,
                "partitionValues": partition,
                "deletionVectorCardinality": file.deleted_rows,
            })
        })
        .collect();
    let configuration = snapshot.table_configuration();
    let metadata = configuration.metadata();
    let properties: Map<String, Value> = metadata
        .configuration()
        .iter()
        .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
        .collect();
    let protocol = configuration.protocol();
    let names = |features: Option<&[_]>| {
        features.map(|features| {
            features
                .iter()
                .map(|feature: &delta_kernel::table_features::TableFeature| {
                    feature.as_ref().to_string()
                })
                .collect()
        })
    };
    let protocol_json = protocol_json(
        json!(protocol.min_reader_version()),
        json!(protocol.min_writer_version()),
        names(protocol.reader_features()),
        names(protocol.writer_features()),
    );
    Ok(json!({
        "version": snapshot.version(),
        "files": files.iter().map(|file| file.path.as_str()).collect::<Vec<_>>(),
        "x_file_details": details,
        "properties": properties,
        "partition_columns": metadata.partition_columns(),
        "protocol": protocol_json,
    }))
}

/// A snapshot JSON's protocol: its versions, and its feature lists sorted (bridge.md: the driver
/// compares lists).
fn protocol_json(
    min_reader: Value,
    min_writer: Value,
    reader: Option<Vec<String>>,
    writer: Option<Vec<String>>,
) -> Value {
    let mut protocol = json!({"minReaderVersion": min_reader, "minWriterVersion": min_writer});
    for (key, names) in [("readerFeatures", reader), ("writerFeatures", writer)] {
        if let Some(mut names) = names {
            names.sort();
            protocol[key] = json!(names);
        }
    }
    protocol
}

/// The rows of the snapshot (`{"columns", "rows"}`, values as bridge.md's "Rows in JSON"): the
/// kernel's own scan, deletion vectors applied and partition values filled in by it.
fn read_rows(
    engine: &Arc<dyn Engine>,
    path: &str,
    version: Option<u64>,
    timestamp: Option<i64>,
) -> Result<Value, ReadError> {
    let snapshot = load(engine, path, version, timestamp)?;
    let scan = snapshot.scan_builder().build()?;
    let columns: Vec<String> = scan
        .logical_schema()
        .fields()
        .map(|field| field.name().to_string())
        .collect();
    let mut rows: Vec<Value> = Vec::new();
    for data in scan.execute(engine.clone())? {
        let data = ArrowEngineData::try_from_engine_data(data?)?;
        let batch: &RecordBatch = data.record_batch();
        let values: Vec<Vec<Value>> = batch
            .columns()
            .iter()
            .map(|column| column_values(column.as_ref()))
            .collect::<Result<_, _>>()?;
        for row in 0..batch.num_rows() {
            rows.push(Value::Array(
                values.iter().map(|column| column[row].clone()).collect(),
            ));
        }
    }
    Ok(json!({"columns": columns, "rows": rows}))
}

fn unsupported_type(data_type: &ArrowType) -> ReadError {
    ReadError {
        kind: "INTERNAL",
        message: format!("read_rows: no JSON encoding here for the Arrow type {data_type}"),
    }
}

/// Every value of an Arrow column as bridge.md's "Rows in JSON" writes it.
fn column_values(column: &dyn Array) -> Result<Vec<Value>, ReadError> {
    let mut values = match column.data_type() {
        ArrowType::Null => vec![Value::Null; column.len()],
        ArrowType::Boolean => column.as_boolean().iter().map(|v| json!(v)).collect(),
        ArrowType::Int8 => column
            .as_primitive::<Int8Type>()
            .iter()
            .map(|v| json!(v))
            .collect(),
        ArrowType::Int16 => column
            .as_primitive::<Int16Type>()
            .iter()
            .map(|v| json!(v))
            .collect(),
        ArrowType::Int32 => column
            .as_primitive::<Int32Type>()
            .iter()
            .map(|v| json!(v))
            .collect(),
        ArrowType::Int64 => column
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| json!(v))
            .collect(),
        ArrowType::Date32 => column
            .as_primitive::<Date32Type>()
            .iter()
            .map(|v| json!(v))
            .collect(),
        ArrowType::Float32 => column
            .as_primitive::<Float32Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| float(f64::from(v))))
            .collect(),
        ArrowType::Float64 => column
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, float))
            .collect(),
        ArrowType::Decimal128(_, scale) => {
            let scale = *scale;
            column
                .as_primitive::<Decimal128Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, |v| Value::from(decimal(v, scale))))
                .collect()
        }
        ArrowType::Timestamp(unit, _) => {
            // microseconds since the epoch, whatever the zone (the physical value)
            let micros: Vec<Option<i64>> = match unit {
                TimeUnit::Second => column
                    .as_primitive::<TimestampSecondType>()
                    .iter()
                    .map(|v| v.map(|v| v * 1_000_000))
                    .collect(),
                TimeUnit::Millisecond => column
                    .as_primitive::<TimestampMillisecondType>()
                    .iter()
                    .map(|v| v.map(|v| v * 1_000))
                    .collect(),
                TimeUnit::Microsecond => column
                    .as_primitive::<TimestampMicrosecondType>()
                    .iter()
                    .collect(),
                TimeUnit::Nanosecond => column
                    .as_primitive::<TimestampNanosecondType>()
                    .iter()
                    .map(|v| v.map(|v| v.div_euclid(1_000)))
                    .collect(),
            };
            micros.into_iter().map(|v| json!(v)).collect()
        }
        ArrowType::Utf8 => column.as_string::<i32>().iter().map(|v| json!(v)).collect(),
        ArrowType::LargeUtf8 => column.as_string::<i64>().iter().map(|v| json!(v)).collect(),
        ArrowType::Utf8View => column.as_string_view().iter().map(|v| json!(v)).collect(),
        ArrowType::Binary => binary(column.as_binary::<i32>().iter()),
        ArrowType::LargeBinary => binary(column.as_binary::<i64>().iter()),
        ArrowType::BinaryView => binary(column.as_binary_view().iter()),
        ArrowType::Struct(fields) => {
            let array = column.as_struct();
            let children: Vec<Vec<Value>> = array
                .columns()
                .iter()
                .map(|child| column_values(child.as_ref()))
                .collect::<Result<_, _>>()?;
            (0..array.len())
                .map(|row| {
                    let object: Map<String, Value> = fields
                        .iter()
                        .zip(&children)
                        .map(|(field, child)| (field.name().clone(), child[row].clone()))
                        .collect();
                    Value::Object(object)
                })
                .collect()
        }
        ArrowType::List(_) => list_values(column.as_list::<i32>())?,
        ArrowType::LargeList(_) => list_values(column.as_list::<i64>())?,
        ArrowType::Map(_, _) => {
            let array = column.as_map();
            let keys = column_values(array.keys().as_ref())?;
            let items = column_values(array.values().as_ref())?;
            let offsets = array.value_offsets();
            (0..array.len())
                .map(|row| {
                    let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                    Value::Array(
                        (start..end)
                            .map(|at| json!([keys[at], items[at]]))
                            .collect(),
                    )
                })
                .collect()
        }
        other => return Err(unsupported_type(other)),
    };
    // a null struct, list or map (its children may hold anything at a null slot)
    for (row, value) in values.iter_mut().enumerate() {
        if column.is_null(row) {
            *value = Value::Null;
        }
    }
    Ok(values)
}

/// A list column's values: each row's slice of its child column.
fn list_values<O: OffsetSizeTrait>(array: &GenericListArray<O>) -> Result<Vec<Value>, ReadError> {
    let items = column_values(array.values().as_ref())?;
    let offsets = array.value_offsets();
    Ok((0..array.len())
        .map(|row| {
            Value::Array(items[offsets[row].as_usize()..offsets[row + 1].as_usize()].to_vec())
        })
        .collect())
}

fn float(value: f64) -> Value {
    if value.is_nan() {
        Value::from("NaN")
    } else if value.is_infinite() {
        Value::from(if value > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(value)
    }
}

/// The exact decimal of an unscaled value and its scale: `-1250`, 2 is `"-12.50"`.
fn decimal(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        let zeros = "0".repeat(usize::from(scale.unsigned_abs()));
        return if unscaled == 0 {
            "0".to_string()
        } else {
            format!("{unscaled}{zeros}")
        };
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale.unsigned_abs());
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    format!("{sign}{whole}.{fraction}")
}

fn binary<'a>(values: impl Iterator<Item = Option<&'a [u8]>>) -> Vec<Value> {
    values
        .map(|v| v.map_or(Value::Null, |bytes| Value::from(base64(bytes))))
        .collect()
}

/// RFC 4648 base64, padded: a dozen lines rather than a crate.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let block = chunk.iter().enumerate().fold(0u32, |block, (at, byte)| {
            block | u32::from(*byte) << (16 - 8 * at)
        });
        for at in 0..4 {
            if at <= chunk.len() {
                text.push(char::from(ALPHABET[(block >> (18 - 6 * at) & 63) as usize]));
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// The kernel's error and its causes (without the backtrace the kernel may attach), within 2000
/// characters.
fn describe(error: &KernelError) -> String {
    if let KernelError::Backtraced { source, .. } = error {
        return describe(source);
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(" <- ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(2000).collect()
}

/// A kernel failure as an error kind of log-vectors.md, by the kernel's error variant where it
/// names one, else INTERNAL. `read` is the version the failed snapshot load asked for (`Some(None)`:
/// the latest; `None`: not a snapshot load), which says what a missing version is: the version
/// asked for itself (VERSION_NOT_FOUND), or one below it that the load needed (a hole).
fn classify(error: &KernelError, read: Option<Option<u64>>) -> &'static str {
    match error {
        KernelError::Backtraced { source, .. } => classify(source, read),
        KernelError::MissingProtocol
        | KernelError::MissingMetadata
        | KernelError::MissingMetadataAndProtocol => "MISSING_PROTOCOL_OR_METADATA",
        // a commit line that is not JSON: the kernel's JSON handler (serde or arrow-json) fails
        KernelError::MalformedJson(_) => "CORRUPT_LOG_FILE",
        KernelError::Arrow(ArrowError::JsonError(_)) => "CORRUPT_LOG_FILE",
        // no commit and no checkpoint at all in _delta_log, or no directory at the root
        KernelError::EmptyLog | KernelError::InvalidTableLocation(_) => "TABLE_NOT_FOUND",
        // "Invalid protocol action in the delta log": a protocol the kernel finds malformed
        KernelError::InvalidProtocol(_) => "CORRUPT_LOG_FILE",
        KernelError::MissingVersion(missing) => match read {
            Some(Some(asked)) if *missing == asked => "VERSION_NOT_FOUND",
            Some(_) => "VERSIONS_NOT_CONTIGUOUS",
            None => "INTERNAL",
        },
        KernelError::Unsupported(_) => "UNSUPPORTED_FEATURE",
        KernelError::LogHistory(history) => match history.as_ref() {
            LogHistoryError::TimestampOutOfRange {
                nearest_timestamp: NearestTimestamp::Earliest(_),
                ..
            } => "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION",
            LogHistoryError::TimestampOutOfRange {
                nearest_timestamp: NearestTimestamp::Latest(_),
                ..
            } => "TIMESTAMP_GREATER_THAN_COMMIT",
            _ => "INTERNAL",
        },
        _ => "INTERNAL",
    }
}
