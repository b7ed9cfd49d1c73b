// SPDX-License-Identifier: Apache-2.0

package cattn

// Status is a libcattn status code (cattn_status_t). Values are frozen by the C ABI; new codes
// are only appended.
//
// Status implements error so that errors.Is(err, cattn.StatusNotSupported) matches an *Error
// with that Code; a call that succeeds returns a nil error, never StatusOK.
type Status int32

// The status codes of cattn.h, with the same values.
const (
	StatusOK               Status = 0 // CATTN_OK
	StatusInvalidArgument  Status = 1 // CATTN_INVALID_ARGUMENT
	StatusCUDAError        Status = 2 // CATTN_CUDA_ERROR
	StatusOutOfMemory      Status = 3 // CATTN_OUT_OF_MEMORY
	StatusInsufficientSize Status = 4 // CATTN_INSUFFICIENT_SIZE
	StatusNotSupported     Status = 5 // CATTN_NOT_SUPPORTED
	StatusInternal         Status = 6 // CATTN_INTERNAL
	StatusNotImplemented   Status = 7 // CATTN_NOT_IMPLEMENTED
	StatusNCCLError        Status = 8 // CATTN_NCCL_ERROR
)

// The names are kept in Go, not fetched with cattn_status_string, so that String works without
// a cgo call; TestStatusStringsMatchTheLibrary holds the two together.
var statusNames = [...]string{
	StatusOK:               "CATTN_OK",
	StatusInvalidArgument:  "CATTN_INVALID_ARGUMENT",
	StatusCUDAError:        "CATTN_CUDA_ERROR",
	StatusOutOfMemory:      "CATTN_OUT_OF_MEMORY",
	StatusInsufficientSize: "CATTN_INSUFFICIENT_SIZE",
	StatusNotSupported:     "CATTN_NOT_SUPPORTED",
	StatusInternal:         "CATTN_INTERNAL",
	StatusNotImplemented:   "CATTN_NOT_IMPLEMENTED",
	StatusNCCLError:        "CATTN_NCCL_ERROR",
}

// String returns the C name of the status ("CATTN_INVALID_ARGUMENT", ...), or
// "CATTN_UNKNOWN_STATUS" as cattn_status_string does for a value it does not know.
//
// See docs/api/context.md.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "CATTN_UNKNOWN_STATUS"
}

// Error returns the same text as String.
func (s Status) Error() string { return s.String() }

// Error is the error every failing call returns: the status and the detail libcattn recorded
// for it, in the library's form "<function>: <argument> <problem> (got X, expected Y)" with Go
// names: the Go function ("cattn.GetDCPLocalSeqLens") and the Go argument or field
// ("args.SeqLens", "md.QueryStartLoc", "cuNumTokens") where libcattn names the C function and
// the C field path ("args->seq_lens"), and nil for NULL. CMessage keeps the message in C
// terms, as cattn_last_error_message gave it (or, for a check made in Go before the call, as
// it would have). Checks made in Go (a view that does not fit its Go slice, a closed handle)
// use the same form and code StatusInvalidArgument.
//
// Use errors.As to get at it:
//
//	var e *cattn.Error
//	if errors.As(err, &e) && e.Code == cattn.StatusInsufficientSize { ... }
type Error struct {
	Code     Status
	Message  string
	CMessage string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}

// Is reports whether target is the Status e carries, for errors.Is(err, cattn.StatusX).
//
// See docs/api/context.md.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Code
}

// argError builds the error of a check made on the Go side, in the library's message form
// with the C names (a frame's argError translates them).
func argError(fn, arg, problem, got, expected string) *Error {
	msg := fn + ": " + arg + " " + problem + " (got " + got + ", expected " + expected + ")"
	return &Error{Code: StatusInvalidArgument, Message: msg, CMessage: msg}
}
