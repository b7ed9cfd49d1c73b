// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"strconv"
	"testing"
)

type layoutCase struct {
	Name      string  `json:"name"`
	Override  *string `json:"override"`
	Env       *string `json:"env"`
	Connector *string `json:"connector"`
	Layout    string  `json:"layout"`
	IsValid   *string `json:"is_valid"`
	Valid     bool    `json:"valid"`
}

func layoutNamed(t *testing.T, name *string) KVCacheLayout {
	t.Helper()
	if name == nil {
		return KVCacheLayoutUnset
	}
	switch *name {
	case "NHD":
		return KVCacheLayoutNHD
	case "HND":
		return KVCacheLayoutHND
	}
	t.Fatalf("unknown layout %q", *name)
	return 0
}

func TestGetKVCacheLayoutVectors(t *testing.T) {
	cases := loadCases[layoutCase](t, "get_kv_cache_layout")
	resolved, validity := 0, 0
	for _, c := range cases {
		if c.IsValid != nil {
			validity++
			got, err := IsValidKVCacheLayout(*c.IsValid)
			mustOK(t, err)
			wantEqual(t, c.Name, got, c.Valid)
			continue
		}
		resolved++
		ctx, err := NewContext()
		mustOK(t, err)
		mustOK(t, ctx.SetKVCacheLayoutOverride(layoutNamed(t, c.Override)))
		for _, viaEnvironment := range []bool{false, true} {
			name := c.Name + "/env_value"
			args := KVCacheLayoutArgs{Connector: layoutNamed(t, c.Connector)}
			if viaEnvironment {
				name = c.Name + "/environment"
				args.ReadEnvironment = true
				if c.Env != nil {
					t.Setenv(KVCacheLayoutEnv, *c.Env)
				} else {
					unsetenv(t, KVCacheLayoutEnv)
				}
			} else {
				args.UserSetting = c.Env
				// A bogus environment must be ignored when the setting is passed in.
				t.Setenv(KVCacheLayoutEnv, "bogus")
			}
			got, err := ctx.GetKVCacheLayout(args)
			if c.Layout == "error" {
				where := "args->env_value is not a valid"
				if viaEnvironment {
					where = KVCacheLayoutEnv + " is not a valid"
				}
				wantError(t, err, StatusInvalidArgument, "cattn_get_kv_cache_layout", where,
					strconv.Quote(*c.Env))
			} else {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				wantEqual(t, name, got.String(), c.Layout)
				wantEqual(t, name+" (C name)", cKVCacheLayoutName(int32(got)), c.Layout)
			}
			if c.Override == nil {
				// Without an override, no context resolves the same way.
				got2, err2 := GetKVCacheLayout(args)
				wantEqual(t, name+" without context", got2, got)
				wantEqual(t, name+" without context (error)", err2 != nil, err != nil)
			}
		}
		mustOK(t, ctx.Close())
	}
	wantEqual(t, "resolved cases", resolved, 72)
	if validity < 8 {
		t.Fatalf("only %d validity cases", validity)
	}
}

func TestGetKVCacheLayoutErrors(t *testing.T) {
	const fn = "cattn_get_kv_cache_layout"
	_, err := GetKVCacheLayout(KVCacheLayoutArgs{Connector: 3})
	wantError(t, err, StatusInvalidArgument, fn, "args->connector_layout")
	// HND resolved, only NHD supported.
	_, err = GetKVCacheLayout(KVCacheLayoutArgs{
		SupportedMask: KVCacheLayoutNHD.Bit(), Connector: KVCacheLayoutHND})
	wantError(t, err, StatusNotSupported, fn)
	got, err := GetKVCacheLayout(KVCacheLayoutArgs{
		SupportedMask: KVCacheLayoutNHD.Bit() | KVCacheLayoutHND.Bit(), Connector: KVCacheLayoutHND})
	mustOK(t, err)
	wantEqual(t, "mask with both", got, KVCacheLayoutHND)
	// A NUL byte would end the C string early; Go refuses it.
	bad := "NHD\x00"
	_, err = GetKVCacheLayout(KVCacheLayoutArgs{UserSetting: &bad})
	wantError(t, err, StatusInvalidArgument, fn, "args->env_value")
	valid, err := IsValidKVCacheLayout(bad)
	mustOK(t, err)
	wantEqual(t, "NUL is never valid", valid, false)

	ctx, err := NewContext()
	mustOK(t, err)
	wantError(t, ctx.SetKVCacheLayoutOverride(3), StatusInvalidArgument,
		"cattn_context_set_kv_cache_layout_override", "layout")
	wantError(t, (*Context)(nil).SetKVCacheLayoutOverride(KVCacheLayoutHND), StatusInvalidArgument,
		"cattn_context_set_kv_cache_layout_override", "ctx")
	mustOK(t, ctx.Close())
	wantError(t, ctx.SetKVCacheLayoutOverride(KVCacheLayoutHND), StatusInvalidArgument, "closed")
	_, err = ctx.GetKVCacheLayout(KVCacheLayoutArgs{})
	wantError(t, err, StatusInvalidArgument, fn, "ctx is closed")
}

func TestKVCacheLayoutNames(t *testing.T) {
	wantEqual(t, "NHD", KVCacheLayoutNHD.String(), "NHD")
	wantEqual(t, "HND", KVCacheLayoutHND.String(), "HND")
	wantEqual(t, "unset", KVCacheLayoutUnset.String(), "UNSET")
	wantEqual(t, "other", KVCacheLayout(9).String(), "KVCacheLayout(9)")
	wantEqual(t, "C has no name for unset", cKVCacheLayoutName(int32(KVCacheLayoutUnset)), "")
	wantEqual(t, "bits", KVCacheLayoutNHD.Bit()|KVCacheLayoutHND.Bit(), uint32(6))
}
