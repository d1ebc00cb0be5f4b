// Code generated from main.go's commands table by go test ./cmd/ratelab -run TestPackageDocIsTheCommandsTable -update; DO NOT EDIT.

// Command ratelab runs scripted traffic through rate limiters on a virtual clock and shows,
// side by side, what each one admits.
//
//	ratelab
//	    the workbench (TUI on a terminal; the default scenario's table otherwise)
//	ratelab run [SCENARIO | FILE | -] [flags]
//	    run a scenario through every limiter and print one row per limiter
//	ratelab list
//	    list the built-in scenarios and the limiter kinds
//	ratelab show [SCENARIO | FILE | -] [flags]
//	    print a scenario as the YAML file it would be (run loads it back to the same
//	    results)
//	ratelab replay --in TRACE.csv --limiter SPEC [--limiter SPEC]... [--out FILE] [--redis ADDR]
//	    stream a recorded trace through limiters, open loop
//	ratelab fit --in TRACE.csv | SCENARIO [--rate RATE] [--refuse PERCENT] [flags]
//	    find the least limiter parameters that admit a trace: its burstiness curve and
//	    each kind's spec
//	ratelab sweep [SCENARIO | FILE | -] --vary TARGET.FIELD=VALUES [--vary …] [flags]
//	    run a grid of limiter parameters over a scenario: every cell's metrics as a
//	    table or CSV, and heatmaps
//	ratelab sweep merge SHARD.csv... [flags]
//	    join the CSVs of a sweep's shards into the CSV one machine writes (and draw its
//	    figures)
//	ratelab translate 'rate=R,burst=B' [--scenario SCENARIO | --in TRACE.csv] [flags]
//	    say one intent (a rate and a burst) in every library's terms, run them all on
//	    the same traffic and show where they admit the same requests
//	ratelab plot [SCENARIO | FILE | -] --out DIR [flags] | --gallery DIR
//	    draw a scenario's charts as PNG or SVG files, or regenerate the gallery
//	ratelab tui [SCENARIO | FILE | -] [flags]
//	    open the interactive workbench: every limiter side by side, one decision at a
//	    time
//	ratelab learn [LESSON | FILE.yaml] [--answers]
//	    list the built-in lessons, or take one: read, predict what the limiters will do,
//	    reach a goal
//	ratelab web [--out DIR] [--addr ADDRESS]
//	    the workbench in a browser: serve the page on a loopback port (its address
//	    printed), or write it as a static site
//	ratelab guarantees [run ID]
//	    list the guarantee catalogue, or run one guarantee: its check's verdict and
//	    golden text
//	ratelab completion bash | zsh | fish
//	    print a shell completion script (commands, flags, scenarios, limiter kinds and
//	    fields)
//	ratelab help [COMMAND]
//	    explain ratelab, or one command and every flag it takes
//	ratelab version
//	    print ratelab's version (also --version)
//
// `ratelab COMMAND -h` (or `ratelab help COMMAND`) explains a command and every flag it
// takes. Exit codes: 0 ok, 1 failure, 2 usage error, 130 interrupted (143 terminated, 129
// hung up); every error is one line on stderr.
package main
