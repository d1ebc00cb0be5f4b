package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/golden"
	"github.com/ratelab/ratelab/lessons"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/scenarios"
)

// Shell completion: `ratelab completion bash|zsh|fish` prints a script that, on each <Tab>,
// asks the binary itself what may come next (`ratelab __complete WORD… CURRENT`), so the
// candidates are always this build's: its commands, each command's flags, scenario names,
// limiter kinds and their fields, chart names, a flag's choices, guarantee IDs. The answer is
// one candidate per line; a first line ":files" asks the shell to offer file names too (a
// FILE, DIR or TRACE flag, or a scenario argument that may be a file).

// filesDirective is __complete's first line when file names also fit.
const filesDirective = ":files"

func completionCommand(_ context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	shells := []string{"bash", "zsh", "fish"}
	if len(positional) != 1 {
		return usageErrorf("completion: name one shell: %s", strings.Join(shells, ", "))
	}
	switch positional[0] {
	case "bash":
		_, err = io.WriteString(e.stdout, bashCompletion)
	case "zsh":
		_, err = io.WriteString(e.stdout, zshCompletion)
	case "fish":
		_, err = io.WriteString(e.stdout, fishCompletion)
	default:
		return usageErrorf("completion: unknown shell %q%s (shells: %s)", positional[0], didYouMean(positional[0], shells, nil), strings.Join(shells, ", "))
	}
	return err
}

// completeCommand answers `ratelab __complete WORD… CURRENT`: the words before the one being
// completed, then that one (possibly empty).
func completeCommand(ctx context.Context, e *env, words []string) error {
	if len(words) == 0 {
		words = []string{""}
	}
	for _, c := range completions(ctx, words[:len(words)-1], words[len(words)-1]) {
		fmt.Fprintln(e.stdout, c)
	}
	return nil
}

// completions is what may replace cur after the words before it, each candidate a whole
// word that starts with cur (the shells filter no further).
func completions(ctx context.Context, before []string, cur string) []string {
	var cands []string
	files := false
	add := func(words ...string) {
		for _, w := range words {
			if strings.HasPrefix(w, cur) && !slices.Contains(cands, w) {
				cands = append(cands, w)
			}
		}
	}
	if len(before) == 0 {
		for _, c := range commands {
			add(c.name)
		}
		add("--help", "--version")
		return cands
	}
	name := before[0]
	if name == "help" {
		if len(before) == 1 {
			for _, c := range commands {
				add(c.name)
			}
		}
		return cands
	}
	c, err := lookupCommand(name)
	if err != nil {
		return nil
	}
	if c.name == "completion" {
		if len(before) == 1 {
			add("bash", "zsh", "fish")
		}
		return cands
	}
	if c.name == "guarantees" {
		switch len(before) {
		case 1:
			add("run")
		case 2:
			if before[1] == "run" {
				for _, g := range golden.Catalogue() {
					add(g.ID)
				}
			}
		}
		return cands
	}
	fs := commandFlags(ctx, c)
	// The value of a flag: after "--flag " or in "--flag=".
	if f, prefix, ok := flagBeingValued(fs, before, cur); ok {
		values, wantFiles := flagValues(c, f, strings.TrimPrefix(cur, prefix))
		for _, v := range values {
			add(prefix + v)
		}
		return withFiles(cands, wantFiles)
	}
	if strings.HasPrefix(cur, "-") {
		if fs != nil {
			fs.VisitAll(func(f *flag.Flag) { add("--" + f.Name) })
		}
		add("--help")
		return cands
	}
	switch c.name {
	case "learn":
		if positionals(fs, before[1:]) == 0 {
			add(lessons.Names()...)
			files = true
		}
	case "run", "show", "plot", "tui", "fit":
		if positionals(fs, before[1:]) == 0 {
			add(scenarios.Names()...)
			add("-")
			files = true
		}
	}
	return withFiles(cands, files)
}

func withFiles(cands []string, files bool) []string {
	if files {
		return append([]string{filesDirective}, cands...)
	}
	return cands
}

// commandFlags is c's flag set, which every command hands back when asked for help.
func commandFlags(ctx context.Context, c command) *flag.FlagSet {
	if c.run == nil {
		return nil
	}
	err := c.run(ctx, &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}, []string{"--help"})
	var h *helpRequested
	if errors.As(err, &h) {
		return h.fs
	}
	return nil
}

// flagBeingValued finds the flag whose value cur is: "--flag=VAL" (prefix "--flag=") or the
// word after a "--flag" that takes a value.
func flagBeingValued(fs *flag.FlagSet, before []string, cur string) (f *flag.Flag, prefix string, ok bool) {
	if fs == nil {
		return nil, "", false
	}
	if strings.HasPrefix(cur, "-") {
		if name, _, found := strings.Cut(strings.TrimLeft(cur, "-"), "="); found {
			if f := fs.Lookup(name); f != nil && !isBool(f) {
				return f, cur[:strings.Index(cur, "=")+1], true
			}
		}
		return nil, "", false
	}
	if len(before) > 1 {
		last := before[len(before)-1]
		if strings.HasPrefix(last, "-") && !strings.Contains(last, "=") {
			if f := fs.Lookup(strings.TrimLeft(last, "-")); f != nil && !isBool(f) {
				return f, "", true
			}
		}
	}
	return nil, "", false
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// positionals counts the positional arguments among words (skipping flags and their values).
func positionals(fs *flag.FlagSet, words []string) int {
	n := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			n++
			continue
		}
		if fs != nil && !strings.Contains(w, "=") {
			if f := fs.Lookup(strings.TrimLeft(w, "-")); f != nil && !isBool(f) {
				i++ // its value
			}
		}
	}
	return n
}

// flagValues is what flag f of command c may be set to, given the part of the value typed
// so far, and whether file names fit.
func flagValues(c command, f *flag.Flag, typed string) (values []string, files bool) {
	switch mv := metavar(f); mv {
	case "FILE", "DIR", "TRACE":
		return []string{"-"}, true
	case "SPEC":
		return specValues(typed), false
	case "NAME":
		if c.name == "plot" && f.Name == "chart" {
			return plots.ChartNames(), false
		}
	case "FORMAT":
		return usageChoices(f.Usage, mv), false
	case "SCENARIO":
		return append(scenarios.Names(), "-"), true
	}
	return nil, false
}

// specValues completes a limiter spec: a kind (with its colon), then the kind's fields (with
// their =). After a + (a stack), a new spec begins; after NAME=, a spec.
func specValues(typed string) []string {
	base := ""
	if i := strings.LastIndex(typed, "+"); i >= 0 {
		base, typed = typed[:i+1], typed[i+1:]
	} else if name, spec, named := splitLaneName(typed); named {
		base, typed = name+"=", spec
	}
	kind, fields, hasKind := strings.Cut(typed, ":")
	var out []string
	if !hasKind {
		for _, k := range limiters.Kinds() {
			out = append(out, base+string(k.Kind)+":")
		}
		return out
	}
	info, ok := limiters.Lookup(limiters.Kind(kind))
	if !ok {
		return nil
	}
	done := ""
	if i := strings.LastIndex(fields, ","); i >= 0 {
		done = fields[:i+1]
	}
	for _, fi := range info.Fields {
		if strings.Contains(","+done, ","+fi.Name+"=") {
			continue // already given
		}
		out = append(out, base+kind+":"+done+fi.Name+"=")
	}
	return out
}

// usageChoices reads a flag's choices from its usage ("the output `FORMAT`: table, json or
// csv" → table, json, csv).
func usageChoices(usage, metavar string) []string {
	_, after, ok := strings.Cut(usage, "`"+metavar+"`: ")
	if !ok {
		return nil
	}
	if i := strings.IndexAny(after, "(;"); i >= 0 {
		after = after[:i]
	}
	var out []string
	for _, part := range strings.Split(strings.ReplaceAll(after, " or ", ", "), ",") {
		if w := strings.TrimSpace(part); w != "" && !strings.Contains(w, " ") {
			out = append(out, w)
		}
	}
	return out
}

// The scripts hand the line so far to `ratelab __complete` and offer what it prints. Words are
// split at spaces; a candidate ending in : or = (a kind, a field) takes no space after it.

const bashCompletion = `# ratelab completion for bash: source it, or put it in ~/.local/share/bash-completion/completions/ratelab
_ratelab() {
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${line##* }
    local -a words
    read -r -a words <<< "${line% *}"
    [[ $line == *" "* ]] || words=()
    local IFS=$'\n'
    local -a cands
    cands=($("${words[0]:-$1}" __complete "${words[@]:1}" "$cur" 2>/dev/null)) || return 0
    COMPREPLY=()
    if [[ ${cands[0]} == ":files" ]]; then
        cands=("${cands[@]:1}")
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    # bash splits words at : and =; offer each candidate without what it has already taken.
    local taken=${cur%"${cur##*[:=]}"}
    local c
    for c in "${cands[@]}"; do
        COMPREPLY+=("${c#"$taken"}")
    done
    if [[ ${#cands[@]} -eq 1 && ${cands[0]} == *[:=] ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}
complete -o default -F _ratelab ratelab
`

const zshCompletion = `#compdef ratelab
# ratelab completion for zsh: put it in a directory of $fpath as _ratelab, or source it after compinit
_ratelab() {
    local -a cands spaced joined
    local out c
    out=$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    cands=("${(@f)out}")
    if [[ ${cands[1]} == ":files" ]]; then
        shift cands
        _files
    fi
    for c in $cands; do
        if [[ $c == *[:=] ]]; then joined+=("$c"); else spaced+=("$c"); fi
    done
    (( ${#spaced} )) && compadd -Q -- "${spaced[@]}"
    (( ${#joined} )) && compadd -Q -S '' -- "${joined[@]}"
    return 0
}
if (( $+functions[compdef] )); then
    compdef _ratelab ratelab
fi
`

const fishCompletion = `# ratelab completion for fish: put it in ~/.config/fish/completions/ratelab.fish
function __ratelab_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] "$cur" 2>/dev/null)
    if test "$out[1]" = ":files"
        set -e out[1]
        __fish_complete_path "$cur"
    end
    printf '%s\n' $out
end
complete -c ratelab -f -a '(__ratelab_complete)'
`
