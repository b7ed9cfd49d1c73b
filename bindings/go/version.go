// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// HeaderVersion is CATTN_VERSION_NUMBER of the cattn.h this package was compiled against:
// MAJOR * 10000 + MINOR * 100 + PATCH. Compare it with Version to detect a library that
// differs from the header.
const HeaderVersion uint32 = headerVersionNumber

// HeaderVersionString is CATTN_VERSION_STRING of that header, "MAJOR.MINOR.PATCH".
const HeaderVersionString = headerVersionString

// Version returns the version number the loaded library was built as (cattn_version); 0 when
// a cattn_dlopen build could not load it (Load says why).
//
// See docs/api/context.md.
func Version() uint32 {
	ensureLoaded()
	return cVersion()
}

// VersionString returns the loaded library's "MAJOR.MINOR.PATCH" (cattn_version_string); ""
// when a cattn_dlopen build could not load it.
func VersionString() string {
	ensureLoaded()
	return cVersionString()
}

// CUDADeviceCount reports how many CUDA devices the library can use (cattn_cuda_device_count):
// 0 in a CPU-only build, without a driver, or without a visible device.
//
// See docs/api/context.md.
func CUDADeviceCount() (int32, error) {
	f := newFrame("cattn_cuda_device_count", "CUDADeviceCount")
	defer f.free()
	return f.cudaDeviceCount()
}

func (f *frame) cudaDeviceCount() (int32, error) {
	var n C.int32_t
	err := f.status(cCUDADeviceCount(&n, f.msg))
	return int32(n), err
}
