// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"os"
	"os/exec"
	"testing"
)

// Every struct cArgs allocates has, in Go, the size C gives it, so struct_size is right.
func TestArgsStructSizes(t *testing.T) {
	if bad := cArgsSizeMismatches(); len(bad) > 0 {
		t.Fatalf("Go and C sizes differ for %v", bad)
	}
}

func TestLoad(t *testing.T) {
	mustOK(t, Load(""))
	if !DLOpenBuild {
		wantEqual(t, "linked: no loaded path", LoadedLibrary(), "")
		wantError(t, Load("/somewhere/libcattn.so.1"), StatusNotSupported, "cattn.Load",
			"-tags cattn_dlopen")
		return
	}
	path := LoadedLibrary()
	if path == "" {
		t.Fatal("a dlopen build that works has no loaded path")
	}
	mustOK(t, Load(path))
	wantError(t, Load(path+".other"), StatusInvalidArgument, "cattn.Load", path)
}

// In a dlopen build, a library that cannot be opened makes every call fail with the loader's
// reason, and a later Load of the right library recovers. The child process runs this test
// with CATTN_LIBRARY naming a file that does not exist.
func TestLoadMissingLibrary(t *testing.T) {
	if !DLOpenBuild {
		t.Skip("the default build links libcattn")
	}
	if real := os.Getenv("CATTN_GO_TEST_REAL_LIBRARY"); real != "" {
		wantEqual(t, "version without a library", Version(), uint32(0))
		_, err := NewContext()
		wantError(t, err, StatusNotSupported, "cattn_context_create", "could not be loaded",
			"/nonexistent/libcattn.so.1")
		wantError(t, Load(""), StatusNotSupported, "cattn_get_api", "/nonexistent/libcattn.so.1")
		mustOK(t, Load(real))
		wantEqual(t, "version after Load", Version(), HeaderVersion)
		return
	}
	mustOK(t, Load(""))
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadMissingLibrary$", "-test.count=1")
	cmd.Env = append(os.Environ(), LibraryEnv+"=/nonexistent/libcattn.so.1",
		"CATTN_GO_TEST_REAL_LIBRARY="+LoadedLibrary())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// Version as the very first call of a process loads the library (a dlopen build used to
// answer 0 until another call had loaded it).
func TestVersionLoadsFirst(t *testing.T) {
	if os.Getenv("CATTN_GO_TEST_VERSION_FIRST") == "1" {
		wantEqual(t, "first call", Version(), HeaderVersion)
		wantEqual(t, "string", VersionString(), HeaderVersionString)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVersionLoadsFirst$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CATTN_GO_TEST_VERSION_FIRST=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
