// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import (
	"strconv"
	"strings"
)

// KVCacheLayout is a KV-cache memory layout (cattn_kv_cache_layout_t).
type KVCacheLayout int32

// The layouts. KVCacheLayoutUnset means "no preference" in arguments and is never a result.
const (
	KVCacheLayoutUnset KVCacheLayout = 0
	KVCacheLayoutNHD   KVCacheLayout = 1
	KVCacheLayoutHND   KVCacheLayout = 2
)

// KVCacheLayoutEnv names the environment variable that plays the part of vLLM's
// VLLM_KV_CACHE_LAYOUT (CATTN_KV_CACHE_LAYOUT_ENV).
const KVCacheLayoutEnv = "CATTN_KV_CACHE_LAYOUT"

// String returns "NHD" or "HND" as cattn_kv_cache_layout_name does, "UNSET" for
// KVCacheLayoutUnset, and "KVCacheLayout(n)" for other values.
//
// See docs/api/get_kv_cache_layout.md.
func (l KVCacheLayout) String() string {
	switch l {
	case KVCacheLayoutNHD:
		return "NHD"
	case KVCacheLayoutHND:
		return "HND"
	case KVCacheLayoutUnset:
		return "UNSET"
	}
	return "KVCacheLayout(" + strconv.Itoa(int(l)) + ")"
}

// Bit returns the layout's bit for KVCacheLayoutArgs.SupportedMask (CATTN_KV_CACHE_LAYOUT_BIT).
//
// See docs/api/get_kv_cache_layout.md.
func (l KVCacheLayout) Bit() uint32 { return 1 << uint32(l) }

// IsValidKVCacheLayout reports whether value names a layout, exactly and case-sensitively
// ("NHD" or "HND"), as vLLM's is_valid_kv_cache_layout (cattn_is_valid_kv_cache_layout).
// A string with a NUL byte is never valid (C would only see the part before it).
func IsValidKVCacheLayout(value string) (bool, error) {
	if strings.IndexByte(value, 0) >= 0 {
		return false, nil
	}
	f := newFrame("cattn_is_valid_kv_cache_layout", "IsValidKVCacheLayout")
	defer f.free()
	return f.isValidKVCacheLayout(value)
}

// KVCacheLayoutArgs are the inputs of GetKVCacheLayout (cattn_kv_cache_layout_args_t). The
// zero value asks for vLLM's default with no user setting, no connector and any layout.
type KVCacheLayoutArgs struct {
	// SupportedMask holds the backend's layouts as Bit()s ORed together; 0 means any layout.
	SupportedMask uint32
	// ReadEnvironment reads CATTN_KV_CACHE_LAYOUT from the process environment when
	// UserSetting is nil. getenv in C races with os.Setenv in Go; prefer UserSetting.
	ReadEnvironment bool
	// UserSetting is vLLM's VLLM_KV_CACHE_LAYOUT as text ("NHD"/"HND"); nil means unset.
	UserSetting *string
	// Connector is the KV connector's preferred layout; Unset means no preference.
	Connector KVCacheLayout
}

// GetKVCacheLayout resolves the KV-cache layout with vLLM's precedence (get_kv_cache_layout,
// cattn_get_kv_cache_layout): the context's override > the user's setting > the connector's
// preference > NHD. A nil Context has no override.
//
// Errors: StatusInvalidArgument for a user setting that is not a layout (vLLM asserts), a
// connector out of range, or a closed Context; StatusNotSupported when the resolved layout is
// not in SupportedMask. A user setting with a NUL byte is rejected on the Go side.
//
// See docs/api/get_kv_cache_layout.md.
func (ctx *Context) GetKVCacheLayout(args KVCacheLayoutArgs) (KVCacheLayout, error) {
	return ctx.getKVCacheLayout("Context.GetKVCacheLayout", args)
}

// GetKVCacheLayout resolves the layout without a context (no override); see
// Context.GetKVCacheLayout.
func GetKVCacheLayout(args KVCacheLayoutArgs) (KVCacheLayout, error) {
	return (*Context)(nil).getKVCacheLayout("GetKVCacheLayout", args)
}

func (ctx *Context) getKVCacheLayout(goName string, args KVCacheLayoutArgs) (KVCacheLayout, error) {
	f := newFrame("cattn_get_kv_cache_layout", goName, "args->env_value", "args.UserSetting",
		"args->connector_layout", "args.Connector")
	defer f.free()
	if args.UserSetting != nil && strings.IndexByte(*args.UserSetting, 0) >= 0 {
		return KVCacheLayoutUnset, f.argError("args->env_value", "is not a valid KV-cache layout",
			"a string with a NUL byte", `"NHD" or "HND"`)
	}
	c, err := ctx.acquire(f)
	if err != nil {
		return KVCacheLayoutUnset, err
	}
	defer ctx.release()
	return f.getKVCacheLayout(c, args.SupportedMask, args.ReadEnvironment, args.UserSetting,
		args.Connector)
}

// SetKVCacheLayoutOverride sets, or with KVCacheLayoutUnset clears, the context's layout
// override, vLLM's _KV_CACHE_LAYOUT_OVERRIDE (cattn_context_set_kv_cache_layout_override).
// Later resolutions see the new value. Errors: StatusInvalidArgument for a layout out of range
// or a nil or closed Context.
//
// See docs/api/get_kv_cache_layout.md.
func (ctx *Context) SetKVCacheLayoutOverride(layout KVCacheLayout) error {
	return ctx.withContext("cattn_context_set_kv_cache_layout_override",
		"Context.SetKVCacheLayoutOverride", func(f *frame, c cContext) error {
			return f.setKVCacheLayoutOverride(c, layout)
		})
}

func (f *frame) isValidKVCacheLayout(value string) (bool, error) {
	var valid C.int32_t
	err := f.status(cIsValidKVCacheLayout(f.cstring(value), &valid, f.msg))
	return valid != 0, err
}

func (f *frame) setKVCacheLayoutOverride(ctx cContext, l KVCacheLayout) error {
	return f.status(cContextSetKVCacheLayoutOverride(ctx, C.int32_t(l), f.msg))
}

func (f *frame) getKVCacheLayout(ctx cContext, mask uint32, readEnv bool, env *string,
	connector KVCacheLayout) (KVCacheLayout, error) {
	a := cArgs[C.cattn_kv_cache_layout_args_t](f)
	a.supported_mask = C.uint32_t(mask)
	a.read_environment = b2i(readEnv)
	if env != nil {
		a.env_value = f.cstring(*env)
	}
	a.connector_layout = C.cattn_kv_cache_layout_t(connector)
	if err := f.status(cGetKVCacheLayout(ctx, a, f.msg)); err != nil {
		return KVCacheLayoutUnset, err
	}
	return KVCacheLayout(a.layout), nil
}
