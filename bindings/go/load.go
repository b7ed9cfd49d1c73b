// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"os"
	"sync"
	"sync/atomic"
)

// SONAME is the file name libcattn is opened by in a cattn_dlopen build: its SONAME,
// "libcattn.so.<ABI major>" (CATTN_SONAME).
const SONAME = "libcattn.so.1"

// LibraryEnv names the environment variable that, in a cattn_dlopen build, gives the library
// to open instead of SONAME: a file name the dynamic loader searches for, or a path.
const LibraryEnv = "CATTN_LIBRARY"

// DLOpenBuild reports whether the package was built with -tags cattn_dlopen: libcattn is then
// not linked but opened at run time (Load), so the program builds and starts without it.
const DLOpenBuild = dlopenBuild

var library struct {
	mu       sync.Mutex
	attempts atomic.Bool // a load was attempted; ensureLoaded then does nothing
	loaded   bool
	path     string
	err      error
}

// Load opens libcattn in a cattn_dlopen build: path, or when it is "" the file $CATTN_LIBRARY
// names, or SONAME. The first call of any other function does the same with "", so Load is
// needed only to choose the library in code or to learn early that it is missing. It
// resolves cattn_get_api and takes the table of ABI 1; a call the table of an older library
// lacks fails with StatusNotSupported. Once a library is loaded it stays loaded: Load again
// returns nil for the same path ("" included) and an error for another. After a failed load
// (StatusNotSupported, the message has the loader's reason) every call fails with that reason,
// and Load may be called again with another path; do that before other goroutines make calls,
// whose messages read the reason while a new attempt rewrites it.
//
// In the default build libcattn is linked: Load("") returns nil and Load of a path fails with
// StatusNotSupported.
//
// See docs/api/api_table.md.
func Load(path string) error {
	library.mu.Lock()
	defer library.mu.Unlock()
	if !dlopenBuild {
		if path != "" {
			return &Error{Code: StatusNotSupported, Message: "cattn.Load: path " + path +
				" cannot be opened (got a build that links libcattn, expected one with -tags cattn_dlopen)"}
		}
		return nil
	}
	if path == "" {
		path = os.Getenv(LibraryEnv)
	}
	if path == "" {
		path = SONAME
	}
	if library.loaded {
		if path != library.path {
			return &Error{Code: StatusInvalidArgument, Message: "cattn.Load: path is another library (got " +
				path + ", expected " + library.path + ", which is loaded)"}
		}
		return nil
	}
	library.path = path
	library.err = loadLibrary(path)
	library.loaded = library.err == nil
	library.attempts.Store(true)
	return library.err
}

// LoadedLibrary returns the path or file name libcattn was opened by in a cattn_dlopen build,
// "" before a successful Load and in the default build.
//
// See docs/api/api_table.md.
func LoadedLibrary() string {
	library.mu.Lock()
	defer library.mu.Unlock()
	if !library.loaded {
		return ""
	}
	return library.path
}

// ensureLoaded makes the implicit first load of a cattn_dlopen build; it tries once.
func ensureLoaded() {
	if dlopenBuild && !library.attempts.Load() {
		_ = Load("")
	}
}

// loadLibrary opens libcattn at path in a cattn_dlopen build (see load.go); linked, it does nothing.
func loadLibrary(path string) error {
	f := newFrameNoLoad("cattn_get_api", "Load", "path", "path")
	defer f.free()
	return f.status(cLoad(f.cstring(path), f.msg))
}
