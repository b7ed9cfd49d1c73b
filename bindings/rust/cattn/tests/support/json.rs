// SPDX-License-Identifier: Apache-2.0
//! A small JSON reader for the conformance vectors: the whole grammar (RFC 8259), integers
//! kept exact as i64 when they have no fraction or exponent, and panics with the byte offset on
//! malformed input (the vectors are checked-in files, so a parse error is a test failure).

#![allow(dead_code)]

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer without fraction or exponent that fits i64.
    Int(i64),
    /// Any other number.
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

pub fn parse(text: &str) -> Json {
    let mut p = Parser {
        bytes: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    let value = p.value();
    p.skip_ws();
    if p.pos != p.bytes.len() {
        p.fail("trailing characters after the value");
    }
    value
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn fail(&self, what: &str) -> ! {
        panic!("JSON: {what} at byte {}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> u8 {
        let b = self.peek().unwrap_or_else(|| self.fail("unexpected end"));
        self.pos += 1;
        b
    }

    fn expect(&mut self, b: u8) {
        if self.next() != b {
            self.pos -= 1;
            self.fail(&format!("expected '{}'", b as char));
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Json {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            value
        } else {
            self.fail("unknown literal")
        }
    }

    fn value(&mut self) -> Json {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Json::Str(self.string()),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fail("expected a value"),
        }
    }

    fn object(&mut self) -> Json {
        self.expect(b'{');
        let mut map = BTreeMap::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Json::Object(map);
        }
        loop {
            self.skip_ws();
            let key = self.string();
            self.skip_ws();
            self.expect(b':');
            self.skip_ws();
            let value = self.value();
            map.insert(key, value);
            self.skip_ws();
            match self.next() {
                b',' => continue,
                b'}' => return Json::Object(map),
                _ => {
                    self.pos -= 1;
                    self.fail("expected ',' or '}'")
                }
            }
        }
    }

    fn array(&mut self) -> Json {
        self.expect(b'[');
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Json::Array(items);
        }
        loop {
            self.skip_ws();
            items.push(self.value());
            self.skip_ws();
            match self.next() {
                b',' => continue,
                b']' => return Json::Array(items),
                _ => {
                    self.pos -= 1;
                    self.fail("expected ',' or ']'")
                }
            }
        }
    }

    fn hex4(&mut self) -> u32 {
        let mut v = 0;
        for _ in 0..4 {
            let d = (self.next() as char)
                .to_digit(16)
                .unwrap_or_else(|| self.fail("bad \\u escape"));
            v = v * 16 + d;
        }
        v
    }

    fn string(&mut self) -> String {
        self.expect(b'"');
        let mut out = String::new();
        loop {
            let start = self.pos;
            while !matches!(self.peek(), Some(b'"' | b'\\') | None) {
                if self.peek() < Some(0x20) {
                    self.fail("control character in a string");
                }
                self.pos += 1;
            }
            out.push_str(
                std::str::from_utf8(&self.bytes[start..self.pos])
                    .unwrap_or_else(|_| self.fail("invalid UTF-8")),
            );
            match self.next() {
                b'"' => return out,
                _ => match self.next() {
                    b'"' => out.push('"'),
                    b'\\' => out.push('\\'),
                    b'/' => out.push('/'),
                    b'b' => out.push('\u{8}'),
                    b'f' => out.push('\u{c}'),
                    b'n' => out.push('\n'),
                    b'r' => out.push('\r'),
                    b't' => out.push('\t'),
                    b'u' => {
                        let mut c = self.hex4();
                        if (0xD800..0xDC00).contains(&c) {
                            // A high surrogate must be followed by an escaped low one.
                            self.expect(b'\\');
                            self.expect(b'u');
                            let low = self.hex4();
                            if !(0xDC00..0xE000).contains(&low) {
                                self.fail("unpaired surrogate");
                            }
                            c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
                        }
                        out.push(char::from_u32(c).unwrap_or_else(|| self.fail("bad code point")));
                    }
                    _ => self.fail("unknown escape"),
                },
            }
        }
    }

    fn number(&mut self) -> Json {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.pos += 1;
            }
            if p.pos == s {
                p.fail("expected a digit");
            }
        };
        digits(self);
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.pos += 1;
            digits(self);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            digits(self);
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).expect("ASCII");
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Json::Int(i);
            }
        }
        Json::Float(text.parse().unwrap_or_else(|_| self.fail("bad number")))
    }
}

impl Json {
    /// The member `key` of an object; panics when absent.
    pub fn get(&self, key: &str) -> &Json {
        self.opt(key)
            .unwrap_or_else(|| panic!("JSON: no member {key:?}"))
    }

    /// The member `key` of an object, `None` when absent.
    pub fn opt(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(map) => map.get(key),
            _ => panic!("JSON: {key:?} looked up in a non-object"),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.opt(key).is_some()
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn i64(&self) -> i64 {
        match self {
            Json::Int(i) => *i,
            other => panic!("JSON: expected an integer, got {other:?}"),
        }
    }

    /// A number; also the strings "nan", "inf" and "-inf" the generators write for values JSON
    /// cannot hold.
    pub fn f64(&self) -> f64 {
        match self {
            Json::Int(i) => *i as f64,
            Json::Float(f) => *f,
            Json::Str(s) if s == "nan" => f64::NAN,
            Json::Str(s) if s == "inf" => f64::INFINITY,
            Json::Str(s) if s == "-inf" => f64::NEG_INFINITY,
            other => panic!("JSON: expected a number, got {other:?}"),
        }
    }

    pub fn bool(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            other => panic!("JSON: expected a boolean, got {other:?}"),
        }
    }

    pub fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("JSON: expected a string, got {other:?}"),
        }
    }

    pub fn array(&self) -> &[Json] {
        match self {
            Json::Array(items) => items,
            other => panic!("JSON: expected an array, got {other:?}"),
        }
    }

    /// An array of integers.
    pub fn ints(&self) -> Vec<i64> {
        self.array().iter().map(Json::i64).collect()
    }

    /// Nested arrays of integers, flattened row-major.
    pub fn flat_ints(&self) -> Vec<i64> {
        match self {
            Json::Array(items) => items.iter().flat_map(Json::flat_ints).collect(),
            leaf => vec![leaf.i64()],
        }
    }
}
