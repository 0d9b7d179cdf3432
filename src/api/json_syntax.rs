//! The first syntax error in a JSON body, worded as Go's encoding/json
//! scanner words it (`invalid character 'b' looking for beginning of
//! object key string`, `unexpected end of JSON input`): upstream's decode
//! errors quote it, and clients compare them.

/// What the scanner is inside of (Go's parseObjectKey, parseObjectValue,
/// parseArrayValue).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    ObjectKey,
    ObjectValue,
    Array,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    Zero,
    One,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`/`false`/`null`: the rest still expected.
    Literal(&'static str, &'static [u8]),
}

/// Go's quoteChar.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        0x07 => r"'\a'".into(),
        0x08 => r"'\b'".into(),
        0x0c => r"'\f'".into(),
        b'\n' => r"'\n'".into(),
        b'\r' => r"'\r'".into(),
        b'\t' => r"'\t'".into(),
        0x0b => r"'\v'".into(),
        c if c < 0x20 || c == 0x7f => format!(r"'\x{c:02x}'"),
        c if (0x80..=0xa0).contains(&c) || c == 0xad => format!(r"'\u{:04x}'", c as u32),
        c => format!("'{}'", c as char),
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The scanner's message for the first error in `input`, if any.
pub fn first_error(input: &[u8]) -> Option<String> {
    let mut stack: Vec<Container> = Vec::new();
    let mut state = State::BeginValue;
    let err = |c: u8, context: &str| Some(format!("invalid character {} {context}", quote_char(c)));
    // Go's scanner ends by stepping one space through the state it is in
    // (`tru` is "invalid character ' ' in literal true"), then asks
    // whether a whole value was read.
    for &c in input.iter().chain(std::iter::once(&b' ')) {
        // Loops until the byte is consumed (some states hand it on).
        loop {
            match state {
                State::BeginValue | State::BeginValueOrEmpty | State::BeginStringOrEmpty
                    if is_space(c) => {}
                State::EndValue | State::EndTop | State::BeginString if is_space(c) => {}
                State::BeginValueOrEmpty if c == b']' => {
                    stack.pop();
                    state = State::EndValue;
                }
                State::BeginStringOrEmpty if c == b'}' => {
                    stack.pop();
                    state = State::EndValue;
                }
                State::BeginValueOrEmpty => {
                    state = State::BeginValue;
                    continue;
                }
                State::BeginStringOrEmpty => {
                    state = State::BeginString;
                    continue;
                }
                State::BeginValue => {
                    state = match c {
                        b'{' => {
                            stack.push(Container::ObjectKey);
                            State::BeginStringOrEmpty
                        }
                        b'[' => {
                            stack.push(Container::Array);
                            State::BeginValueOrEmpty
                        }
                        b'"' => State::InString,
                        b'-' => State::Neg,
                        b'0' => State::Zero,
                        b'1'..=b'9' => State::One,
                        b't' => State::Literal("true", b"rue"),
                        b'f' => State::Literal("false", b"alse"),
                        b'n' => State::Literal("null", b"ull"),
                        _ => return err(c, "looking for beginning of value"),
                    };
                }
                State::BeginString => {
                    if c != b'"' {
                        return err(c, "looking for beginning of object key string");
                    }
                    state = State::InString;
                }
                State::EndValue => {
                    let Some(top) = stack.last_mut() else {
                        state = State::EndTop;
                        continue;
                    };
                    match (*top, c) {
                        (Container::ObjectKey, b':') => {
                            *top = Container::ObjectValue;
                            state = State::BeginValue;
                        }
                        (Container::ObjectKey, _) => return err(c, "after object key"),
                        (Container::ObjectValue, b',') => {
                            *top = Container::ObjectKey;
                            state = State::BeginString;
                        }
                        (Container::ObjectValue, b'}') | (Container::Array, b']') => {
                            stack.pop();
                            state = State::EndValue;
                        }
                        (Container::ObjectValue, _) => {
                            return err(c, "after object key:value pair")
                        }
                        (Container::Array, b',') => state = State::BeginValue,
                        (Container::Array, _) => return err(c, "after array element"),
                    }
                }
                State::EndTop => return err(c, "after top-level value"),
                State::InString => match c {
                    b'"' => state = State::EndValue,
                    b'\\' => state = State::InStringEsc,
                    c if c < 0x20 => return err(c, "in string literal"),
                    _ => {}
                },
                State::InStringEsc => match c {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                        state = State::InString
                    }
                    b'u' => state = State::InStringEscU(0),
                    _ => return err(c, "in string escape code"),
                },
                State::InStringEscU(n) => {
                    if !c.is_ascii_hexdigit() {
                        return err(c, "in \\u hexadecimal character escape");
                    }
                    state = if n == 3 {
                        State::InString
                    } else {
                        State::InStringEscU(n + 1)
                    };
                }
                State::Neg => match c {
                    b'0' => state = State::Zero,
                    b'1'..=b'9' => state = State::One,
                    _ => return err(c, "in numeric literal"),
                },
                State::One if c.is_ascii_digit() => {}
                State::One | State::Zero => match c {
                    b'.' => state = State::Dot,
                    b'e' | b'E' => state = State::E,
                    _ => {
                        state = State::EndValue;
                        continue;
                    }
                },
                State::Dot => {
                    if !c.is_ascii_digit() {
                        return err(c, "after decimal point in numeric literal");
                    }
                    state = State::Dot0;
                }
                State::Dot0 => match c {
                    c if c.is_ascii_digit() => {}
                    b'e' | b'E' => state = State::E,
                    _ => {
                        state = State::EndValue;
                        continue;
                    }
                },
                State::E if c == b'+' || c == b'-' => state = State::ESign,
                State::E | State::ESign => {
                    if !c.is_ascii_digit() {
                        return err(c, "in exponent of numeric literal");
                    }
                    state = State::E0;
                }
                State::E0 => {
                    if !c.is_ascii_digit() {
                        state = State::EndValue;
                        continue;
                    }
                }
                State::Literal(word, rest) => {
                    if c != rest[0] {
                        return err(
                            c,
                            &format!("in literal {word} (expecting {})", quote_char(rest[0])),
                        );
                    }
                    state = if rest.len() == 1 {
                        State::EndValue
                    } else {
                        State::Literal(word, &rest[1..])
                    };
                }
            }
            break;
        }
    }
    match state {
        State::EndTop => None,
        State::EndValue if stack.is_empty() => None,
        _ => Some("unexpected end of JSON input".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::first_error;

    #[test]
    fn errors_read_as_gos() {
        let e = |s: &str| first_error(s.as_bytes());
        assert_eq!(
            e("{bad").as_deref(),
            Some("invalid character 'b' looking for beginning of object key string")
        );
        assert_eq!(
            e(r#"{"a" 1}"#).as_deref(),
            Some("invalid character '1' after object key")
        );
        assert_eq!(
            e(r#"{"a":1 "b"}"#).as_deref(),
            Some("invalid character '\"' after object key:value pair")
        );
        assert_eq!(
            e("[1,]").as_deref(),
            Some("invalid character ']' looking for beginning of value")
        );
        assert_eq!(
            e("[1 2]").as_deref(),
            Some("invalid character '2' after array element")
        );
        assert_eq!(
            e("{} x").as_deref(),
            Some("invalid character 'x' after top-level value")
        );
        assert_eq!(
            e("tru").as_deref(),
            Some("invalid character ' ' in literal true (expecting 'e')")
        );
        assert_eq!(e("{").as_deref(), Some("unexpected end of JSON input"));
        assert_eq!(
            e("1.").as_deref(),
            Some("invalid character ' ' after decimal point in numeric literal")
        );
        assert_eq!(
            e("trux").as_deref(),
            Some("invalid character 'x' in literal true (expecting 'e')")
        );
        assert_eq!(
            e("\"a\nb\"").as_deref(),
            Some("invalid character '\\n' in string literal")
        );
        assert_eq!(
            e("01").as_deref(),
            Some("invalid character '1' after top-level value")
        );
        assert_eq!(
            e("-x").as_deref(),
            Some("invalid character 'x' in numeric literal")
        );
        assert_eq!(e(""), Some("unexpected end of JSON input".into()));
        for ok in [
            r#"{"a":[1,2.5e3,-0,true,false,null,"x\u00e9"],"b":{}}"#,
            "[]",
            " 12 ",
            "\"s\"",
        ] {
            assert_eq!(e(ok), None, "{ok}");
        }
    }
}
