//! Reading a command line as pflag does: syntax, typed value checks and
//! the errors pflag and cobra print.

use std::collections::BTreeMap;
use std::net::IpAddr;

use super::flags::{flags, lookup, Flag};
use crate::component_base::parse_bool;

/// A command line as pflag read it: each flag's values, in order.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    pub(super) values: BTreeMap<&'static str, Vec<String>>,
    pub(super) positional: Vec<String>,
}

/// What pflag and cobra print for a command line they refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("unknown flag: --{0}")]
    UnknownFlag(String),
    #[error("unknown shorthand flag: '{0}' in -{1}")]
    UnknownShorthand(char, String),
    #[error("flag needs an argument: --{0}")]
    NeedsArgument(String),
    #[error("invalid argument \"{value}\" for \"{flag}\" flag: {reason}")]
    Invalid {
        value: String,
        flag: String,
        reason: String,
    },
    #[error("\"kube-apiserver\" does not take any arguments, got {0}")]
    Positional(String),
}

impl CommandLine {
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<CommandLine, ParseError> {
        let mut cl = CommandLine::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--" {
                cl.positional.extend(args.by_ref());
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let flag = lookup(name).ok_or_else(|| ParseError::UnknownFlag(name.to_string()))?;
                let value = match inline {
                    Some(v) => v,
                    None if flag.is_boolean() => "true".into(),
                    None => args
                        .next()
                        .ok_or_else(|| ParseError::NeedsArgument(flag.name.to_string()))?,
                };
                cl.set(flag, &format!("--{}", flag.name), value)?;
            } else if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
                for (i, c) in shorts.char_indices() {
                    let flag = flags()
                        .iter()
                        .find(|f| f.shorthand == Some(c))
                        .ok_or_else(|| ParseError::UnknownShorthand(c, shorts.to_string()))?;
                    let rest = &shorts[i + c.len_utf8()..];
                    if flag.is_boolean() {
                        let value = rest.strip_prefix('=').map_or("true", |v| v);
                        cl.set(flag, &format!("-{c}"), value.to_string())?;
                        if rest.starts_with('=') {
                            break;
                        }
                        continue;
                    }
                    let value = if let Some(v) = rest.strip_prefix('=') {
                        v.to_string()
                    } else if !rest.is_empty() {
                        rest.to_string()
                    } else {
                        args.next()
                            .ok_or_else(|| ParseError::NeedsArgument(flag.name.to_string()))?
                    };
                    cl.set(flag, &format!("-{c}"), value)?;
                    break;
                }
            } else {
                cl.positional.push(arg);
            }
        }
        if cl.positional.iter().any(|a| !a.is_empty()) {
            let quoted: Vec<String> = cl.positional.iter().map(|a| format!("\"{a}\"")).collect();
            return Err(ParseError::Positional(format!("[{}]", quoted.join(" "))));
        }
        Ok(cl)
    }

    fn set(&mut self, flag: &'static Flag, shown: &str, value: String) -> Result<(), ParseError> {
        check_value(flag, &value).map_err(|reason| ParseError::Invalid {
            value: value.clone(),
            flag: shown.to_string(),
            reason,
        })?;
        self.values.entry(flag.name).or_default().push(value);
        Ok(())
    }

    /// The flag's last value, if it was given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name)?.last().map(String::as_str)
    }

    /// Every value of a list flag: repeated and comma-separated alike.
    pub fn list(&self, name: &str) -> Vec<String> {
        let kind = lookup(name).map_or("strings", |f| f.kind);
        self.values
            .get(name)
            .into_iter()
            .flatten()
            .flat_map(|v| -> Vec<String> {
                if kind == "stringArray" {
                    vec![v.clone()]
                } else {
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                }
            })
            .collect()
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(parse_bool)
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The flags given, by name.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.keys().copied()
    }
}

/// The value checks pflag's typed flags make, with Go's messages.
fn check_value(flag: &Flag, value: &str) -> Result<(), String> {
    let syntax = |f: &str| format!("{f}: parsing \"{value}\": invalid syntax");
    match flag.kind {
        "bool" | "version" => parse_bool(value)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseBool")),
        "int" | "Level" => parse_go_int(value)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseInt")),
        "uint" => parse_go_int(value)
            .filter(|n| *n >= 0)
            .map(|_| ())
            .ok_or_else(|| syntax("strconv.ParseUint")),
        "float" | "float32" => value
            .parse::<f64>()
            .map(|_| ())
            .map_err(|_| syntax("strconv.ParseFloat")),
        "duration" => crate::config::duration::parse(value)
            .map(|_| ())
            .map_err(|_| format!("time: invalid duration \"{value}\"")),
        "ip" => value
            .parse::<IpAddr>()
            .map(|_| ())
            .map_err(|_| format!("failed to parse IP: \"{value}\"")),
        _ => Ok(()),
    }
}

/// strconv.ParseInt(s, 0, 64): decimal, or 0x/0o/0b prefixed.
pub(super) fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let digits = digits.replace('_', "");
    let n = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        i64::from_str_radix(o, 8).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some(if neg { -n } else { n })
}
