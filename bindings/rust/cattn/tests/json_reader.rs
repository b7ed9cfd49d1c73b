// SPDX-License-Identifier: Apache-2.0
//! The test support's JSON reader against the grammar's corner cases.

#[path = "support/json.rs"]
mod json;

use json::{parse, Json};

#[test]
fn parses_the_grammar() {
    let v = parse(
        r#" {"a": [1, -2, 3.5, -0.0, 1e3, true, false, null],
                       "s": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "o": {}, "e": []} "#,
    );
    assert_eq!(v.get("a").array()[0], Json::Int(1));
    assert_eq!(v.get("a").array()[1], Json::Int(-2));
    assert_eq!(v.get("a").array()[2], Json::Float(3.5));
    assert!(v.get("a").array()[3].f64().is_sign_negative());
    assert_eq!(v.get("a").array()[4], Json::Float(1000.0));
    assert!(v.get("a").array()[7].is_null());
    assert_eq!(v.get("s").str(), "q\"\\/\u{8}\u{c}\n\r\t\u{e9}\u{1F600}");
    assert_eq!(v.get("e").array().len(), 0);
    assert_eq!(parse("[[1,2],[3]]").flat_ints(), vec![1, 2, 3]);
    assert_eq!(parse("9223372036854775807"), Json::Int(i64::MAX));
    assert_eq!(
        parse("9223372036854775808"),
        Json::Float(9223372036854775808.0)
    );
}

#[test]
#[should_panic(expected = "JSON")]
fn rejects_trailing_commas() {
    parse("[1, 2,]");
}

#[test]
#[should_panic(expected = "JSON")]
fn rejects_unterminated_strings() {
    parse("\"abc");
}
