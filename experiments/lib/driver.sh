# Sourced after common.sh by the experiment scripts whose work is one Python driver in
# experiments/lib/: the options common.sh knows go to parse_options, the driver's own
# to the driver, with --out, --quick and the command line to record.
# Set DRIVER_FLAGS (options without a value) and DRIVER_VALUED (options with one), and
# DATA_NOTE (the data line of meta.txt; @DATA@ stands for --data) before calling parse_driver_options "$@".

parse_driver_options() {
    local all="$*" rest=()
    DRIVER_ARGS=()
    while [ $# -gt 0 ]; do
        if [[ " ${DRIVER_VALUED:-} " == *" $1 "* ]]; then
            DRIVER_ARGS+=("$1" "${2:?$1 needs a value}")
            shift
        elif [[ " ${DRIVER_FLAGS:-} " == *" $1 "* ]]; then
            DRIVER_ARGS+=("$1")
        else
            rest+=("$1")
        fi
        shift
    done
    parse_options ${rest[@]+"${rest[@]}"}
    COMMAND_LINE="experiments/$(basename "$0") $all"
    write_meta
    local note=${DATA_NOTE:-}
    sed -i "s|^data: .*|data: ${note//@DATA@/$DATA}|" "$OUT/meta.txt"
    [ "$QUICK" = 1 ] && DRIVER_ARGS+=(--quick)
    return 0
}

# run_driver SCRIPT: experiments/lib/SCRIPT with the options gathered above.
run_driver() {
    "$PY" "$EXP/lib/$1" --out "$OUT" ${DRIVER_ARGS[@]+"${DRIVER_ARGS[@]}"} --command "$COMMAND_LINE"
    rmdir "$OUT/runs" 2>/dev/null || true  # these experiments keep no per-run files
}
