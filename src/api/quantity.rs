//! `resource.Quantity` (apimachinery's `pkg/api/resource`): parsed as
//! upstream's `ParseQuantity` does, held in nano units (the finest
//! precision upstream keeps), added and compared, and printed in the
//! canonical form of `Quantity.String()`.
//!
//! Built-in objects carry quantities in resource lists, requests and
//! limits, capacities and quota; upstream decodes each into a `Quantity`
//! and encodes it back, so a write that says `0.5` or `1024Mi` is stored
//! and answered as `500m` or `1Gi`, and one that says `abc` is refused
//! before anything else looks at it ([`canonicalize_fields`]).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

const NANO: i128 = 1_000_000_000;

/// Why a string is not a quantity: upstream's `ErrFormatWrong`,
/// `ErrNumeric` and `ErrSuffix`, whose texts clients see in the 400.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    FormatWrong,
    Numeric,
    Suffix,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseError::FormatWrong => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            ParseError::Numeric => "unable to parse numeric part of quantity",
            ParseError::Suffix => "unable to parse quantity's suffix",
        })
    }
}

impl std::error::Error for ParseError {}

/// How a quantity prints, as upstream's `resource.Format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `1e3`, `12e6`.
    DecimalExponent,
    /// `1Ki`, `1Gi`.
    BinarySI,
    /// `100m`, `1k`, `5`.
    DecimalSI,
}

/// A quantity: its value in nano units and the format it prints in.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    pub nanos: i128,
    pub format: Format,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

/// upstream's `Add`: a zero value takes the other's format.
impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_add(other.nanos),
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }
}

/// upstream's `Sub`: a zero value takes the other's format.
impl std::ops::Sub for Quantity {
    type Output = Quantity;

    fn sub(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_sub(other.nanos),
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }
}

impl Default for Quantity {
    fn default() -> Self {
        Quantity::zero()
    }
}

impl Quantity {
    pub fn zero() -> Quantity {
        Quantity {
            nanos: 0,
            format: Format::DecimalSI,
        }
    }

    /// A whole number (object counts).
    pub fn int(n: i64) -> Quantity {
        Quantity {
            nanos: i128::from(n) * NANO,
            format: Format::DecimalSI,
        }
    }

    /// Parses `100m`, `1Gi`, `1e3`, `+2.5`...; `None` when it is not a quantity.
    pub fn parse(s: &str) -> Option<Quantity> {
        Quantity::parse_strict(s.trim()).ok()
    }

    /// upstream's `ParseQuantity`: a signed decimal number, then a suffix
    /// (`m`, `Ki`, `e3`, ...). What it accepts oddly it accepts here too
    /// (`.`, `+` and `1.G` are quantities); values below a nano round up
    /// (away from zero); binary values are capped at 2^63-1.
    pub fn parse_strict(s: &str) -> Result<Quantity, ParseError> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(ParseError::FormatWrong);
        }
        let digits_from = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut pos = 0;
        let negative = b[0] == b'-';
        if matches!(b[0], b'-' | b'+') {
            pos = 1;
        }
        while pos < b.len() && b[pos] == b'0' {
            pos += 1;
        }
        let num_end = digits_from(pos);
        let num = &s[pos..num_end];
        pos = num_end;
        let mut denom = "";
        if pos < b.len() && b[pos] == b'.' {
            let end = digits_from(pos + 1);
            denom = &s[pos + 1..end];
            pos = end;
        }
        let suffix_from = pos;
        while pos < b.len() && b"eEinumkKMGTP".contains(&b[pos]) {
            pos += 1;
        }
        if pos < b.len() && matches!(b[pos], b'-' | b'+') {
            pos += 1;
        }
        if digits_from(pos) != b.len() {
            return Err(ParseError::FormatWrong);
        }
        let (base2, exponent, format) = match &s[suffix_from..] {
            "" => (false, 0, Format::DecimalSI),
            "n" => (false, -9, Format::DecimalSI),
            "u" => (false, -6, Format::DecimalSI),
            "m" => (false, -3, Format::DecimalSI),
            "k" => (false, 3, Format::DecimalSI),
            "M" => (false, 6, Format::DecimalSI),
            "G" => (false, 9, Format::DecimalSI),
            "T" => (false, 12, Format::DecimalSI),
            "P" => (false, 15, Format::DecimalSI),
            "E" => (false, 18, Format::DecimalSI),
            "Ki" => (true, 10, Format::BinarySI),
            "Mi" => (true, 20, Format::BinarySI),
            "Gi" => (true, 30, Format::BinarySI),
            "Ti" => (true, 40, Format::BinarySI),
            "Pi" => (true, 50, Format::BinarySI),
            "Ei" => (true, 60, Format::BinarySI),
            other => match other.strip_prefix(['e', 'E']).map(str::parse::<i32>) {
                Some(Ok(e)) => (false, e, Format::DecimalExponent),
                _ => return Err(ParseError::Suffix),
            },
        };
        // The digits without the point, and the power of ten that puts it
        // back, in nano units.
        let mut mantissa: i128 = 0;
        for d in num.bytes().chain(denom.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(d - b'0')))
                .ok_or(ParseError::Numeric)?;
        }
        let mut exp10 = 9 - denom.len() as i64;
        if base2 {
            mantissa = mantissa
                .checked_mul(1i128 << exponent)
                .ok_or(ParseError::Numeric)?;
        } else {
            exp10 += i64::from(exponent);
        }
        let mut nanos = if mantissa == 0 {
            0
        } else if exp10 >= 0 {
            u32::try_from(exp10)
                .ok()
                .and_then(|e| 10i128.checked_pow(e))
                .and_then(|p| mantissa.checked_mul(p))
                .ok_or(ParseError::Numeric)?
        } else {
            // Less than a nano: some resources rather than none (RoundUp).
            match u32::try_from(-exp10)
                .ok()
                .and_then(|e| 10i128.checked_pow(e))
            {
                Some(d) => (mantissa + d - 1) / d,
                None => 1,
            }
        };
        const MAX_BINARY: i128 = (i64::MAX as i128) * NANO;
        if format == Format::BinarySI && nanos > MAX_BINARY {
            nanos = MAX_BINARY;
        }
        Ok(Quantity {
            nanos: if negative { -nanos } else { nanos },
            format,
        })
    }

    /// A quantity field (a string, or a number some clients send).
    pub fn from_value(v: &Value) -> Option<Quantity> {
        Quantity::from_json(v).ok()
    }

    /// upstream's `Quantity.UnmarshalJSON`: a string or a bare number,
    /// trimmed; anything else fails as a malformed quantity would.
    pub fn from_json(v: &Value) -> Result<Quantity, ParseError> {
        match v {
            Value::String(s) => Quantity::parse_strict(s.trim()),
            Value::Number(n) => Quantity::parse_strict(&n.to_string()),
            Value::Null => Ok(Quantity::zero()),
            _ => Err(ParseError::FormatWrong),
        }
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The value as a JSON string, as quantities are serialized.
    pub fn to_value(&self) -> Value {
        Value::String(self.to_string())
    }
}

/// upstream's decode and encode of every quantity of a built-in object:
/// each comes back in canonical form (`0.5` is `500m`, `1024Mi` is `1Gi`,
/// a map's `null` is `0`); the first that does not parse fails the decode.
pub fn canonicalize_fields(
    api_version: &str,
    kind: &str,
    obj: &mut Value,
) -> Result<(), ParseError> {
    crate::api::protobuf::visit_quantities(api_version, kind, obj, &mut |v, in_map| {
        if v.is_null() && !in_map {
            return Ok(());
        }
        let canonical = Quantity::from_json(v)?.to_string();
        if v.as_str() != Some(canonical.as_str()) {
            *v = Value::String(canonical);
        }
        Ok(())
    })
}

impl fmt::Display for Quantity {
    /// upstream's `Quantity.String()` (`CanonicalizeBytes`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut format = self.format;
        if format == Format::BinarySI
            && ((-1024 * NANO < self.nanos && self.nanos < 1024 * NANO) || self.nanos % NANO != 0)
        {
            // Small or fractional binary values print in decimal, as upstream.
            format = Format::DecimalSI;
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        if abs == 0 {
            return f.write_str("0");
        }
        if format == Format::BinarySI {
            let mut v = abs / NANO as u128;
            let mut e = 0;
            while e < 6 && v.is_multiple_of(1024) {
                v /= 1024;
                e += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][e];
            return write!(f, "{sign}{v}{suffix}");
        }
        let mut mantissa = abs;
        let mut exp: i32 = -9;
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exp += 1;
        }
        while exp % 3 != 0 {
            mantissa *= 10;
            exp -= 1;
        }
        if format == Format::DecimalExponent {
            return if exp == 0 {
                write!(f, "{sign}{mantissa}")
            } else {
                write!(f, "{sign}{mantissa}e{exp}")
            };
        }
        let suffix = match exp {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => return write!(f, "{sign}{mantissa}e{exp}"),
        };
        write!(f, "{sign}{mantissa}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Quantity::parse(s)
            .map(|q| q.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canon("100m"), "100m");
        assert_eq!(canon("1000m"), "1");
        assert_eq!(canon("0.5"), "500m");
        assert_eq!(canon("1500"), "1500");
        assert_eq!(canon("1000000"), "1M");
        assert_eq!(canon("2k"), "2k");
        assert_eq!(canon("1Gi"), "1Gi");
        assert_eq!(canon("1024Mi"), "1Gi");
        assert_eq!(canon("1536Mi"), "1536Mi");
        assert_eq!(canon("512"), "512");
        assert_eq!(canon("1e3"), "1e3");
        assert_eq!(canon("12e6"), "12e6");
        assert_eq!(canon("0"), "0");
        assert_eq!(canon("-2"), "-2");
        assert_eq!(canon("1.5Gi"), "1536Mi");
        assert!(Quantity::parse("abc").is_none());
        assert_eq!(canon("1.G"), "1G");
        assert_eq!(canon("."), "0");
        assert_eq!(canon("+"), "0");
        assert_eq!(canon("0.1n"), "1n");
        assert_eq!(canon("-0.1n"), "-1n");
        assert_eq!(canon("1E-3"), "1e-3");
        assert_eq!(canon("1e+3"), "1e3");
        assert_eq!(canon("100000Ei"), "9223372036854775807");
    }

    #[test]
    fn what_is_no_quantity_fails_as_upstreams_parser_says() {
        let err = |s: &str| Quantity::parse_strict(s).err();
        assert_eq!(err(""), Some(ParseError::FormatWrong));
        assert_eq!(err("abc"), Some(ParseError::FormatWrong));
        assert_eq!(err("1 Gi"), Some(ParseError::FormatWrong));
        assert_eq!(err("1.2.3"), Some(ParseError::FormatWrong));
        assert_eq!(err("1K"), Some(ParseError::Suffix));
        assert_eq!(err("1e"), Some(ParseError::Suffix));
        assert_eq!(err("1m5"), Some(ParseError::Suffix));
        assert_eq!(err("1Ki5"), Some(ParseError::Suffix));
        assert_eq!(err("5"), None);
        assert_eq!(
            ParseError::FormatWrong.to_string(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn a_pods_quantities_are_written_back_canonical() {
        let mut pod = serde_json::json!({"spec": {"containers": [{"resources": {
            "requests": {"cpu": "0.5", "memory": "1024Mi", "ephemeral-storage": 1073741824},
            "limits": {"cpu": null}
        }}]}});
        assert_eq!(canonicalize_fields("v1", "Pod", &mut pod), Ok(()));
        let r = &pod["spec"]["containers"][0]["resources"];
        assert_eq!(r["requests"]["cpu"], "500m");
        assert_eq!(r["requests"]["memory"], "1Gi");
        assert_eq!(r["requests"]["ephemeral-storage"], "1073741824");
        assert_eq!(r["limits"]["cpu"], "0");
        let mut bad = serde_json::json!({"spec": {"hard": {"pods": "many"}}});
        assert_eq!(
            canonicalize_fields("v1", "ResourceQuota", &mut bad),
            Err(ParseError::FormatWrong)
        );
    }

    #[test]
    fn arithmetic_keeps_the_first_format() {
        let a = Quantity::parse("1Gi").unwrap_or_default();
        let b = Quantity::parse("512Mi").unwrap_or_default();
        assert_eq!((Quantity::zero() + a + b).to_string(), "1536Mi");
        let c = Quantity::zero()
            + Quantity::parse("100m").unwrap_or_default()
            + Quantity::parse("200m").unwrap_or_default();
        assert_eq!(c.to_string(), "300m");
        assert_eq!((Quantity::int(2) - Quantity::int(1)).to_string(), "1");
        assert!(
            Quantity::parse("2").unwrap_or_default() > Quantity::parse("1500m").unwrap_or_default()
        );
    }
}
