# lib.sh -- helpers for the bf16emu command-line tests (sourced by sh)
#
# The tests run the installed-layout binary named by $BF16EMU (make check
# sets it; by hand it defaults to ./experiments/bf16emu) and compare its
# output with exact expected lines.  Each check counts as one test; the
# script fails if any check fails, printing what was expected and what
# came out.

: "${BF16EMU:=./experiments/bf16emu}"
LC_ALL=C
export LC_ALL
unset NO_COLOR

n_pass=0
n_fail=0
ctx=
tmp=${TMPDIR:-/tmp}/bf16emu-test.$$
rm -rf "$tmp"
mkdir "$tmp" || exit 99
trap 'rm -rf "$tmp"' 0 1 2 13 15

if [ ! -x "$BF16EMU" ]; then
    echo "bf16emu not found at '$BF16EMU' (set BF16EMU)"
    exit 99
fi

# Skips: each prints one "SKIP: ..." line and ends the test with exit 77
# (make check's code for a test that cannot run here).
# need_built PROG...: each PROG is an executable file (a helper program
# of the test suite).
need_built()
{
    for _p in "$@"; do
        if [ ! -x "$_p" ]; then
            echo "SKIP: $_p not built"
            exit 77
        fi
    done
}

# need_jsonq: $JSONQ (default ./tests/experiments/jsonq) is built.
need_jsonq()
{
    : "${JSONQ:=./tests/experiments/jsonq}"
    need_built "$JSONQ"
}

# need_data FILE...: each FILE (a data fixture) is readable.
need_data()
{
    for _f in "$@"; do
        if [ ! -r "$_f" ]; then
            echo "SKIP: $_f missing"
            exit 77
        fi
    done
}

# need_gpu_data SET FILE: FILE of the GPU data set tests/data/gpu/SET is
# readable; $srcdir/tests/data/gpu/SET is then in $gpu_data.
need_gpu_data()
{
    gpu_data=$srcdir/tests/data/gpu/$1
    if [ ! -r "$gpu_data/$2" ]; then
        echo "SKIP: tests/data/gpu/$1 missing"
        exit 77
    fi
}

# need_python3: python3 is on the PATH.
need_python3()
{
    if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIP: python3 not found"
        exit 77
    fi
}

# need_mpirun: bf16emu built with MPI and $MPIRUN there (else SKIP);
# Open MPI then runs as root, on this machine's loopback, oversubscribed.
# Under the sanitizer build LeakSanitizer would report what Open MPI
# allocates in MPI_Init and never frees (in plugins it has unloaded by
# exit, so the reports cannot even name them): leak checking is off for
# the ranks only ($MPI_ASAN); the same code paths without MPI are
# leak-checked by the single-process tests.
need_mpirun()
{
    if [ -z "${MPIRUN:-}" ] || [ ! -x "$MPIRUN" ]; then
        echo "SKIP: bf16emu built without MPI, or no mpirun"
        exit 77
    fi
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl=self,tcp
    OMPI_MCA_btl_tcp_if_include=lo
    OMPI_MCA_oob_tcp_if_include=lo
    OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
        OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include \
        OMPI_MCA_rmaps_base_oversubscribe
    MPI_ASAN=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
}

# mpi NP ARGS...: bf16emu under mpirun with NP ranks, like run.
mpi()
{
    _np=$1
    shift
    ctx="mpirun -np $_np bf16emu $*"
    ASAN_OPTIONS=$MPI_ASAN "$MPIRUN" --oversubscribe -x ASAN_OPTIONS \
        -np "$_np" "$BF16EMU" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

pass() { n_pass=$((n_pass + 1)); }

fail()
{
    n_fail=$((n_fail + 1))
    echo "FAIL [$ctx]: $*"
}

# run ARGS...: run bf16emu; stdout in $tmp/out, stderr in $tmp/err, status
# in $rc.  The context for messages is the command line.
run()
{
    ctx="bf16emu $*"
    "$BF16EMU" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

expect_rc()
{
    if [ "$rc" -eq "$1" ]; then
        pass
    else
        fail "exit status $rc, expected $1; stderr:"
        sed 's/^/    /' "$tmp/err"
    fi
}

# expect_line TEXT: stdout has a line exactly equal to TEXT.
expect_line()
{
    if grep -F -x -e "$1" "$tmp/out" >/dev/null; then
        pass
    else
        fail "no output line equal to:"
        echo "    |$1|"
        echo "  output was:"
        sed 's/^/    |/' "$tmp/out" | head -80
    fi
}

# expect_no_line TEXT: stdout has no line equal to TEXT.
expect_no_line()
{
    if grep -F -x -e "$1" "$tmp/out" >/dev/null; then
        fail "unexpected output line: $1"
    else
        pass
    fi
}

# expect_out_has TEXT / expect_err_has TEXT: substring of stdout / stderr.
expect_out_has()
{
    if grep -F -e "$1" "$tmp/out" >/dev/null; then
        pass
    else
        fail "stdout does not contain: $1"
        sed 's/^/    |/' "$tmp/out" | head -80
    fi
}

expect_err_has()
{
    if grep -F -e "$1" "$tmp/err" >/dev/null; then
        pass
    else
        fail "stderr does not contain: $1"
        sed 's/^/    |/' "$tmp/err"
    fi
}

# expect_text_has TEXT: stdout, with its lines joined by single spaces,
# contains TEXT (for word-wrapped paragraphs).
expect_text_has()
{
    if tr '\n' ' ' <"$tmp/out" | tr -s ' ' | grep -F -e "$1" >/dev/null
    then
        pass
    else
        fail "the text does not contain: $1"
        sed 's/^/    |/' "$tmp/out" | head -80
    fi
}

expect_no_stdout()
{
    if [ -s "$tmp/out" ]; then
        fail "expected no output on stdout, got:"
        sed 's/^/    |/' "$tmp/out" | head -20
    else
        pass
    fi
}

expect_no_stderr()
{
    if [ -s "$tmp/err" ]; then
        fail "expected nothing on stderr, got:"
        sed 's/^/    |/' "$tmp/err" | head -20
    else
        pass
    fi
}

# expect_err_only PREFIX: stderr is one line, and it starts with PREFIX
# (a subcommand's note, such as attn's cost line, and nothing else).
expect_err_only()
{
    if [ "$(wc -l <"$tmp/err")" -eq 1 ] \
        && [ "$(cut -c1-${#1} "$tmp/err")" = "$1" ]; then
        pass
    else
        fail "expected one line on stderr starting with '$1', got:"
        sed 's/^/    |/' "$tmp/err" | head -20
    fi
}

# expect_same_as FILE: stdout equals FILE byte for byte.
expect_same_as()
{
    if cmp -s "$1" "$tmp/out"; then
        pass
    else
        fail "output differs from $1:"
        diff "$1" "$tmp/out" | head -40
    fi
}

# expect_jsons PATH VALUE [PATH VALUE ...]: the values at the PATHs of
# the last output (one $JSONQ run for all of them; paths hold no blanks).
expect_jsons()
{
    _paths=
    : >"$tmp/jwant"
    while [ $# -ge 2 ]; do
        _paths="$_paths $1"
        printf '%s\n' "$2" >>"$tmp/jwant"
        shift 2
    done
    # shellcheck disable=SC2086
    "$JSONQ" "$tmp/out" $_paths >"$tmp/jgot" 2>"$tmp/jerr"
    if cmp -s "$tmp/jwant" "$tmp/jgot"; then
        pass
    else
        fail "JSON values (path, expected, got):"
        echo "$_paths" | tr ' ' '\n' | sed '/^$/d' >"$tmp/jpaths"
        paste "$tmp/jpaths" "$tmp/jwant" "$tmp/jgot" | sed 's/^/    /'
        cat "$tmp/jerr"
    fi
}

# expect_stage NAME STAGE-INDEX STAGE WANT-EQUAL WANT-TOTAL: stage
# STAGE-INDEX of the last `diff --json` output ($tmp/out, read with
# $JSONQ) has WANT-EQUAL of WANT-TOTAL elements bit-equal; otherwise the
# failure names the first differing element with both bit patterns.
expect_stage()
{
    _j() { "$JSONQ" "$tmp/out" "$1" 2>/dev/null; }
    _eq=$(_j "stages.$2.equal")
    _en=$(_j "stages.$2.elements")
    if [ -n "$_en" ] && [ "$_eq" = "$4" ] && [ "$_en" = "$5" ]; then
        pass
    else
        fail "$1 $3: $_eq of $_en bit-equal, expected $4 of $5; first" \
            "differing: $(_j "stages.$2.worst.0.index") gpu" \
            "$(_j "stages.$2.worst.0.gpu.bits") emulator" \
            "$(_j "stages.$2.worst.0.emulator.bits")"
    fi
}

# expect_kept NAME STAGE-INDEX STAGE WHOLE: stage STAGE-INDEX of the last
# `diff --json` output is an output the dump keeps in part (manifest:
# outputs_kept) with WHOLE elements in all and the emulator's whole
# tensor has the GPU's hash; WHOLE "-": the dump stores it whole.
expect_kept()
{
    _j() { "$JSONQ" "$tmp/out" "$1" 2>/dev/null; }
    if [ "$4" = - ]; then
        _w=$(_j "stages.$2.kept")
        if [ "$_w" = null ]; then pass; else
            fail "$1 $3: kept in part ($_w), expected whole"; fi
        return
    fi
    _w=$(_j "stages.$2.kept.whole_elements")
    _h=$(_j "stages.$2.kept.hash_equal")
    if [ "$_w" = "$4" ] && [ "$_h" = true ]; then
        pass
    else
        fail "$1 $3: whole tensor of '$_w' elements, hash equal '$_h';" \
            "expected $4, true"
    fi
}

# check_stages FILE BACKEND POLICY STAGES [EQUAL TOTAL INDEX]: diff of
# the outputs BACKEND.o, BACKEND.lse, ... of the GPU dump FILE (q, k, v,
# do) under POLICY; every element of each stage of the comma-separated
# STAGES bit-equal (exit 0), or for stage INDEX, EQUAL of TOTAL (exit 1).
check_stages()
{
    _f=$1
    _b=$2
    _bwd=
    case $4 in
    *dq*) _bwd="--do $_f:do --dq $_f:$_b.dq --dk $_f:$_b.dk --dv $_f:$_b.dv" ;;
    esac
    _lse=
    case $4 in
    *lse*) _lse="--lse $_f:$_b.lse" ;;
    esac
    # shellcheck disable=SC2086
    run diff --dump "$_f" --q "$_f:q" --k "$_f:k" --v "$_f:v" \
        --o "$_f:$_b.o" $_lse $_bwd --policy "$3" --stage "$4" --no-exact \
        --json
    if [ -n "$5" ]; then expect_rc 1; else expect_rc 0; fi
    _n=$(echo "$4" | tr ',' '\n' | wc -l)
    _i=0
    while [ "$_i" -lt "$_n" ]; do
        _e=$("$JSONQ" "$tmp/out" "stages.$_i.elements" 2>/dev/null)
        _eq=$_e
        if [ "$_i" = "${7:-x}" ]; then _eq=$5; _e=$6; fi
        expect_stage "$(basename "$_f" .safetensors) $_b" "$_i" \
            "$(echo "$4" | cut -d, -f$((_i + 1)))" "$_eq" "$_e"
        _i=$((_i + 1))
    done
}

# need_attn_inputs: $ATTN_INPUTS (default ./tests/experiments/attn_inputs,
# the input writer and tensor reader of the attention tests) and $JSONQ
# are built.
need_attn_inputs()
{
    : "${ATTN_INPUTS:=./tests/experiments/attn_inputs}"
    : "${JSONQ:=./tests/experiments/jsonq}"
    need_built "$ATTN_INPUTS" "$JSONQ"
}

# jq PATH: the value at PATH in the last output (empty when it has none).
jq() { "$JSONQ" "$tmp/out" "$1" 2>/dev/null; }

# expect_json PATH VALUE: the value at PATH in the last output.
expect_json()
{
    got=$("$JSONQ" "$tmp/out" "$1" 2>"$tmp/jerr")
    if [ $? -eq 0 ] && [ "$got" = "$2" ]; then
        pass
    else
        fail "JSON $1 is '$got', expected '$2' $(cat "$tmp/jerr")"
    fi
}

# expect_same A B NAME...: the tensors NAME... of the files A and B hold
# the same bytes ($ATTN_INPUTS same).
expect_same()
{
    _a=$1 _b=$2
    shift 2
    if "$ATTN_INPUTS" same "$_a" "$_b" "$@" >"$tmp/same" 2>&1; then
        pass
    else
        fail "$_a and $_b differ:"
        sed 's/^/    /' "$tmp/same"
    fi
}

# expect_no_files: the output folder $o is empty (no output, no
# temporary); what a failure finds there is removed, so that it is
# reported once.
expect_no_files()
{
    if [ -z "$(ls -A "$o")" ]; then
        pass
    else
        fail "files left behind: $(ls -A "$o" | tr '\n' ' ')"
        rm -f "$o"/*
    fi
}

# expect_error MESSAGE ARGS...: bf16emu ARGS exits 2 with MESSAGE on
# stderr and nothing on stdout.  bad is the same; a test redefines bad
# where its refusals share more (a subcommand, no output files).
expect_error()
{
    _msg=$1
    shift
    run "$@"
    expect_rc 2
    expect_no_stdout
    expect_err_has "$_msg"
}

bad() { expect_error "$@"; }

# README.md's examples: readme_has NAME succeeds when README.md marks a
# block with "<!-- NAME -->"; readme_block NAME prints that block (the
# text between the ``` lines after the mark); expect_readme NAME: the
# block, as kept in $tmp/readme, equals this run's output in $tmp/ran;
# readme_missing NAME notes that there was nothing to compare.
readme_has()
{
    grep -x -e "<!-- $1 -->" "$srcdir/README.md" >/dev/null 2>&1
}

readme_block()
{
    awk -v mark="<!-- $1 -->" '
        $0 == mark { marked = 1; next }
        marked && !inside && /^```$/ { inside = 1; next }
        inside && /^```$/ { exit }
        inside { print }
    ' "$srcdir/README.md"
}

expect_readme()
{
    ctx="README.md $1 example"
    if [ -s "$tmp/readme" ] && cmp -s "$tmp/readme" "$tmp/ran"; then
        pass
    else
        fail "README.md's output differs from this run:"
        diff "$tmp/readme" "$tmp/ran" | head -20
    fi
}

readme_missing()
{
    echo "note: README.md has no <!-- $1 --> example; not compared"
}

finish()
{
    echo "$n_pass checks passed, $n_fail failed"
    [ "$n_fail" -eq 0 ]
}
