// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"regexp"
	"strings"
)

// Messages in Go terms. libcattn names the C function and the C path of the argument it
// refuses ("cattn_get_dcp_local_seq_lens: args->dcp_rank ..."). Each Go entry point gives its
// frame its Go name and the renames of the C paths whose Go spelling is not the mechanical one
// (a positional parameter, a field named differently); the rest of a path under a renamed or
// default root converts word by word: "args->metadata->seq_lens_cpu" becomes
// "args.Metadata.SeqLensCPU".

// callNames is what a frame translates with: the C function, the Go one, and C path -> Go
// path pairs.
type callNames struct {
	c, goName string
	renames   []string // c0, go0, c1, go1, ...; of two equal c, the later wins
}

// pathToken matches an identifier followed by any "->field", ".field" and "[index]" parts.
var pathToken = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:(?:->|\.)[A-Za-z_][A-Za-z0-9_]*|\[[^\]\s]*\])*`)

// cFunction matches the name of a libcattn function.
var cFunction = regexp.MustCompile(`^cattn_[a-z0-9_]+$`)

// goWords are the snake_case words whose Go form is not the word capitalised.
var goWords = map[string]string{
	"cpu": "CPU", "dcp": "DCP", "pcp": "PCP", "kv": "KV", "qkv": "QKV", "id": "ID", "mm": "MM",
	"lse": "LSE", "cuda": "CUDA", "nccl": "NCCL", "mlist": "MList", "offsetlist": "OffsetList",
}

// goField converts one snake_case C field name to its mechanical Go name.
func goField(c string) string {
	var b strings.Builder
	for _, w := range strings.Split(c, "_") {
		if w == "" {
			continue
		}
		if g, ok := goWords[w]; ok {
			b.WriteString(g)
		} else {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// goRest converts the "->field", ".field" and "[index]" parts after a path's root.
func goRest(rest string) string {
	var b strings.Builder
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "->"), strings.HasPrefix(rest, "."):
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "->"), ".")
			n := strings.IndexAny(rest, "-.[")
			if n < 0 {
				n = len(rest)
			}
			b.WriteString("." + goField(rest[:n]))
			rest = rest[n:]
		case strings.HasPrefix(rest, "["):
			n := strings.IndexByte(rest, ']') + 1
			b.WriteString(rest[:n])
			rest = rest[n:]
		default: // not a path part: leave it
			b.WriteString(rest)
			rest = ""
		}
	}
	return b.String()
}

// goPath returns the Go spelling of one C path token, or the token unchanged when no rename
// (nor the default root "args") covers it.
func (n *callNames) goPath(tok string) string {
	switch tok {
	case "NULL":
		return "nil"
	case "CATTN_DCP_ALL_RANKS":
		return "cattn.AllDCPRanks"
	case "DLTensor":
		return "*Tensor"
	}
	best, goPrefix := -1, ""
	consider := func(c, g string) {
		if len(c) < best || !strings.HasPrefix(tok, c) {
			return
		}
		if len(tok) > len(c) && !strings.ContainsRune("-.[", rune(tok[len(c)])) {
			return // a longer identifier that merely starts with c
		}
		best, goPrefix = len(c), g
	}
	for i := 0; i+1 < len(n.renames); i += 2 {
		consider(n.renames[i], n.renames[i+1])
	}
	if best < 0 {
		consider("args", "args")
	}
	if best < 0 || (best == len(tok) && goPrefix == tok) {
		return tok
	}
	return goPrefix + goRest(tok[best:])
}

// translate rewrites a message in C terms into Go terms: the leading function name, and every
// argument path.
func (n *callNames) translate(msg string) string {
	if n == nil || n.goName == "" {
		return msg
	}
	// Every C call a frame makes is on behalf of its Go entry point, so any libcattn function
	// leading the message (a one-call helper makes several) is that entry point's.
	head, rest := "", msg
	if fn, tail, ok := strings.Cut(msg, ": "); ok && (fn == n.c || cFunction.MatchString(fn)) {
		head, rest = "cattn."+n.goName+": ", tail
	}
	return head + pathToken.ReplaceAllStringFunc(rest, n.goPath)
}
