// SPDX-License-Identifier: Apache-2.0
//! The six-layout calls (1.1) through the safe API against the upstream oracle's vectors:
//! properties, names, strides, get_supported_kv_cache_layouts, resolve/record/get_resolved.

mod support;

use cattn::*;
use support::json::Json;
use support::load_cases;

fn layout(name: &str) -> CacheLayout {
    CacheLayout::from_name(name).expect("a layout name")
}

fn opt_str(j: &Json) -> Option<&str> {
    (!j.is_null()).then(|| j.str())
}

#[test]
fn layout_vectors() {
    let (mut props, mut names, mut strides) = (0, 0, 0);
    for c in load_cases("kv_cache_layout") {
        match c.get("kind").str() {
            "properties" => {
                let l = layout(c.get("name").str());
                assert_eq!(l.name(), c.get("name").str());
                assert_eq!(CacheLayout::ALL[c.get("order").i64() as usize], l);
                let p = l.properties().unwrap();
                let so: Vec<i64> = p.stride_order.iter().map(|&x| i64::from(x)).collect();
                assert_eq!(so, c.get("stride_order").ints());
                let lv: Vec<i64> = p.layer_view_order.iter().map(|&x| i64::from(x)).collect();
                assert_eq!(lv, c.get("layer_view_order").ints());
                assert_eq!(p.is_layer_compact, c.get("is_layer_compact").bool());
                assert_eq!(p.is_block_contiguous, c.get("is_block_contiguous").bool());
                assert_eq!(p.is_block_compact, c.get("is_block_compact").bool());
                assert_eq!(p.is_block_outermost, c.get("is_block_outermost").bool());
                match opt_str(c.get("flashinfer")) {
                    Some(fi) => {
                        assert_eq!(p.flashinfer_layout, Some(fi));
                        assert_eq!(l.flashinfer_layout_string().unwrap(), fi);
                    }
                    None => {
                        assert_eq!(p.flashinfer_layout, None);
                        let e = l.flashinfer_layout_string().unwrap_err();
                        assert_eq!(e.status(), Status::NotSupported);
                    }
                }
                props += 1;
            }
            "from_name" => {
                let input = c.get("input").str();
                match (c.get("layout").str(), CacheLayout::from_name(input)) {
                    ("error", Err(e)) => {
                        assert_eq!(e.status(), Status::InvalidArgument, "{input:?}");
                        assert!(
                            e.message().contains("name is an unknown KV cache layout"),
                            "{e}"
                        );
                    }
                    (want, Ok(got)) => assert_eq!(got.name(), want, "{input:?}"),
                    (want, Err(e)) => panic!("{input:?}: want {want}, got {e}"),
                }
                names += 1;
            }
            _ => {
                let sizes: [i64; 5] = c.get("sizes").ints().try_into().unwrap();
                let got = layout(c.get("layout").str()).strides(sizes);
                if c.has("error") {
                    assert!(got.unwrap_err().message().contains("overflows int64"));
                } else {
                    let got = got.unwrap();
                    assert_eq!(got.strides.to_vec(), c.get("strides").ints());
                    assert_eq!(got.physical_shape.to_vec(), c.get("physical_shape").ints());
                    assert_eq!(got.numel, c.get("numel").i64());
                }
                strides += 1;
            }
        }
    }
    assert_eq!((props, names, strides), (6, 25, 354));
}

#[test]
fn get_supported_vectors() {
    let (mut ok, mut errors) = (0, 0);
    for c in load_cases("get_supported_kv_cache_layouts") {
        let decls: Vec<Option<Vec<CacheLayout>>> = c
            .get("backends")
            .array()
            .iter()
            .map(|d| (!d.is_null()).then(|| d.array().iter().map(|n| layout(n.str())).collect()))
            .collect();
        let backends: Vec<Option<&[CacheLayout]>> = decls.iter().map(|d| d.as_deref()).collect();
        let got = get_supported_kv_cache_layouts(&backends);
        let want = c.get("layouts");
        let want_error = matches!(want, Json::Str(s) if s == "error");
        match got {
            Err(e) => {
                assert!(want_error, "{}: {e}", c.get("name").str());
                assert_eq!(e.status(), Status::InvalidArgument);
                errors += 1;
            }
            Ok(got) => {
                let names: Vec<&str> = got.iter().map(|l| l.name()).collect();
                let want: Vec<&str> = want.array().iter().map(|n| n.str()).collect();
                assert_eq!(names, want, "{}", c.get("name").str());
                ok += 1;
            }
        }
    }
    assert_eq!(ok + errors, 322);
    assert!(errors >= 30);
}

#[test]
fn resolve_vectors() {
    let (mut resolved, mut failed, mut others) = (0, 0, 0);
    for c in load_cases("resolve_kv_cache_layout") {
        let kind = c.get("kind").str();
        let ctx = Context::new().unwrap();
        if kind != "resolve" {
            ctx.set_kv_cache_layout_preset(opt_str(c.get("initial")))
                .unwrap();
            if kind == "record" {
                let r = ctx.record_kv_cache_layout(c.get("input").str());
                assert_eq!(r.is_err(), c.has("error"));
            } else {
                match ctx.resolved_kv_cache_layout() {
                    Ok(l) => assert_eq!(l.name(), c.get("layout").str()),
                    Err(e) => {
                        assert!(c.has("error"));
                        assert_eq!(e.status(), Status::InvalidArgument);
                    }
                }
            }
            others += 1;
            continue;
        }
        let name = c.get("name").str();
        ctx.set_kv_cache_layout_preset(opt_str(c.get("preset")))
            .unwrap();
        let lists: Vec<Vec<&str>> = c
            .get("workers")
            .array()
            .iter()
            .map(|w| w.array().iter().map(|n| n.str()).collect())
            .collect();
        let workers: Vec<&[&str]> = lists.iter().map(|w| w.as_slice()).collect();
        let specs: Vec<HncShape> = if c.get("specs").is_null() {
            Vec::new()
        } else {
            c.get("specs")
                .array()
                .iter()
                .map(|s| {
                    let v = s.ints();
                    HncShape {
                        num_heads: v[0],
                        num_states: v[1],
                        page_size_bytes: v[2],
                    }
                })
                .collect()
        };
        let args = ResolveArgs {
            workers: &workers,
            specs: &specs,
            setting: opt_str(c.get("env")).map_or(LayoutSetting::Unset, LayoutSetting::Value),
            connector: opt_str(c.get("connector")),
        };
        match resolve_kv_cache_layout(&ctx, &args) {
            Ok(r) => {
                assert!(!c.has("error"), "{name}");
                assert_eq!(r.layout.name(), c.get("layout").str(), "{name}");
                assert_eq!(r.connector_fell_back, c.get("fell_back").bool(), "{name}");
                resolved += 1;
            }
            Err(e) => {
                assert!(c.has("error"), "{name}: {e}");
                assert_eq!(e.status(), Status::InvalidArgument);
                assert!(
                    e.message().starts_with("cattn_resolve_kv_cache_layout:"),
                    "{e}"
                );
                failed += 1;
            }
        }
    }
    assert_eq!(resolved + failed, 439);
    assert_eq!(others, 81);
}

#[test]
fn one_call_helper_and_record() {
    assert_eq!(
        resolve_layout(&["BLNHC", "NHD"]).unwrap(),
        CacheLayout::Blnhc
    );
    let e = resolve_layout(&[]).unwrap_err();
    assert!(e.message().contains("args->worker_counts[0]"), "{e}");
    let ctx = Context::new().unwrap();
    ctx.record_kv_cache_layout("HND").unwrap();
    assert_eq!(ctx.resolved_kv_cache_layout().unwrap(), CacheLayout::Lbhnc);
    let e = ctx.record_kv_cache_layout("BLHNC").unwrap_err();
    assert!(e.message().contains("already resolved to"), "{e}");
    let e = CacheLayout::from_name("N\0HD").unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message()
            .starts_with("cattn::CacheLayout::from_name: name contains a NUL byte (got \"N\\0HD\""),
        "{e}"
    );
    // A name of the resolver's arguments is named by its place in them.
    let workers: [&[&str]; 2] = [&["NHD"], &["HND", "B\0"]];
    let e = resolve_kv_cache_layout(
        &ctx,
        &ResolveArgs {
            workers: &workers,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        e.message().starts_with(
            "cattn::resolve_kv_cache_layout: args.workers[1][1] contains a NUL byte (got"
        ),
        "{e}"
    );
}
