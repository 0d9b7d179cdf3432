//! One stored record: what `revs` holds for a key at a revision. A kind
//! byte (put or delete), the key's create revision and version (little
//! endian), then the value, so a read needs no second lookup for the
//! revisions etcd reports beside a value.

use bytes::Bytes;

use super::super::backend::BackendError;

pub(super) const KIND_PUT: u8 = 1;
pub(super) const KIND_DELETE: u8 = 2;

pub(super) fn encode_record(kind: u8, create_revision: i64, version: i64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(17 + value.len());
    out.push(kind);
    out.extend_from_slice(&create_revision.to_le_bytes());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(value);
    out
}

pub(super) struct Record {
    pub(super) kind: u8,
    pub(super) create_revision: i64,
    pub(super) version: i64,
    pub(super) value: Bytes,
}

pub(super) fn decode_record(raw: &[u8]) -> Result<Record, BackendError> {
    if raw.len() < 17 {
        return Err(BackendError::Corrupt(format!(
            "record of {} bytes is too short",
            raw.len()
        )));
    }
    let word = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&raw[at..at + 8]);
        i64::from_le_bytes(b)
    };
    Ok(Record {
        kind: raw[0],
        create_revision: word(1),
        version: word(9),
        value: Bytes::copy_from_slice(&raw[17..]),
    })
}
