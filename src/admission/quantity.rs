//! `resource.Quantity` as the admission plugins need it: parsed to nano
//! units (the finest precision upstream keeps), added, compared, and
//! printed in upstream's canonical form (`Quantity.String()`), which is
//! how quantities appear in LimitRanger and ResourceQuota messages and in
//! a quota's `status.used`.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::registry::helpers::parse_quantity;

const NANO: i128 = 1_000_000_000;

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
        let nanos = parse_quantity(s)?;
        let t = s.trim().trim_start_matches(['+', '-']);
        let suffix = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let format = if suffix.ends_with('i') {
            Format::BinarySI
        } else if suffix.starts_with(['e', 'E']) {
            Format::DecimalExponent
        } else {
            Format::DecimalSI
        };
        Some(Quantity { nanos, format })
    }

    /// A quantity field (a string, or a number some clients send).
    pub fn from_value(v: &Value) -> Option<Quantity> {
        match v {
            Value::String(s) => Quantity::parse(s),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
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
