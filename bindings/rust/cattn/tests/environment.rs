// SPDX-License-Identifier: Apache-2.0
//! The user setting read from the process environment (UserSetting::Environment). Alone in its
//! test binary: it sets a variable, which must not race with other threads reading it.

use cattn::*;

#[test]
fn user_setting_from_the_environment() {
    let args = KvCacheLayoutArgs {
        user_setting: UserSetting::Environment,
        connector: Some(KvCacheLayout::Nhd),
        ..Default::default()
    };
    let name = std::str::from_utf8(&sys::CATTN_KV_CACHE_LAYOUT_ENV[..]).unwrap();
    let name = name.trim_end_matches('\0');
    std::env::remove_var(name);
    assert_eq!(
        get_kv_cache_layout(None, &args).unwrap(),
        KvCacheLayout::Nhd
    );
    std::env::set_var(name, "HND");
    assert_eq!(
        get_kv_cache_layout(None, &args).unwrap(),
        KvCacheLayout::Hnd
    );
    std::env::set_var(name, "hnd");
    let e = get_kv_cache_layout(None, &args).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(
        e.message().contains("CATTN_KV_CACHE_LAYOUT is not a valid"),
        "{e}"
    );
    // An explicit value is read instead of the environment.
    let args = KvCacheLayoutArgs {
        user_setting: UserSetting::Value("NHD"),
        ..args
    };
    assert_eq!(
        get_kv_cache_layout(None, &args).unwrap(),
        KvCacheLayout::Nhd
    );
    std::env::remove_var(name);
}
