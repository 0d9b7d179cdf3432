//! The protobuf wire format: wire types and a cursor reading varints,
//! fixed-width and length-delimited values, and skipping unknown fields.
//! Shared by the decoder and the encoder.

use super::decode::{malformed, DecodeError};
use super::{Kind, MAX_DEPTH};

pub(super) const WIRE_VARINT: u8 = 0;
pub(super) const WIRE_FIXED64: u8 = 1;
pub(super) const WIRE_LEN: u8 = 2;
pub(super) const WIRE_START_GROUP: u8 = 3;
pub(super) const WIRE_END_GROUP: u8 = 4;
pub(super) const WIRE_FIXED32: u8 = 5;

pub(super) fn wire_type_of(kind: Kind) -> u8 {
    match kind {
        Kind::String | Kind::Bytes | Kind::Message(_) | Kind::Map(..) => WIRE_LEN,
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => WIRE_FIXED64,
        Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => WIRE_FIXED32,
        _ => WIRE_VARINT,
    }
}

pub(super) fn is_packable(kind: Kind) -> bool {
    wire_type_of(kind) != WIRE_LEN
}

/// A cursor over protobuf wire data.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    context: &'a str,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8], context: &'a str) -> Self {
        Reader {
            buf,
            pos: 0,
            context,
        }
    }

    pub(super) fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn truncated(&self) -> DecodeError {
        DecodeError::Truncated(self.context.to_string())
    }

    pub(super) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = *self.buf.get(self.pos).ok_or_else(|| self.truncated())?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(malformed(self.context, "varint longer than 10 bytes"))
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated())?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.truncated())?;
        self.pos = end;
        Ok(s)
    }

    pub(super) fn fixed32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_le_bytes(a))
    }

    pub(super) fn fixed64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(super) fn len_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| self.truncated())?;
        self.take(n)
    }

    /// A field key: tag and wire type.
    pub(super) fn key(&mut self) -> Result<(u32, u8), DecodeError> {
        let k = self.varint()?;
        let tag = u32::try_from(k >> 3)
            .map_err(|_| malformed(self.context, "field number out of range"))?;
        if tag == 0 {
            return Err(malformed(self.context, "field number 0"));
        }
        Ok((tag, (k & 7) as u8))
    }

    /// Skips the value of an unknown field.
    pub(super) fn skip(&mut self, wire: u8) -> Result<(), DecodeError> {
        self.skip_nested(wire, 0)
    }

    fn skip_nested(&mut self, wire: u8, depth: usize) -> Result<(), DecodeError> {
        match wire {
            WIRE_VARINT => self.varint().map(drop),
            WIRE_FIXED64 => self.take(8).map(drop),
            WIRE_LEN => self.len_delimited().map(drop),
            WIRE_FIXED32 => self.take(4).map(drop),
            WIRE_START_GROUP => {
                if depth > MAX_DEPTH {
                    return Err(DecodeError::TooDeep);
                }
                loop {
                    if self.done() {
                        return Err(self.truncated());
                    }
                    let (_, w) = self.key()?;
                    if w == WIRE_END_GROUP {
                        return Ok(());
                    }
                    self.skip_nested(w, depth + 1)?;
                }
            }
            w => Err(malformed(self.context, format!("wire type {w}"))),
        }
    }
}
