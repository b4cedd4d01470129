# test_trace_exact.sh -- bf16emu trace writes exact decimals (the input
# errors of hex-float and decimal operands, exact sums wider than 128 bits,
# quotients and square roots) and reads operands from @FILE and stdin
#
# Expected values are exact rational arithmetic done by hand, never taken
# from the program:
#   2^-n = 5^n / 10^n, so its digits are those of 5^n:
#   5^400 (280 digits) = 38725919148493182728...7587890625, hence
#     2^-400 = 3.8725919148493182728...7587890625e-121;
#   5^300 (210 digits) = 49090934652977265530...0718994140625, hence
#     2^-300 = 4.9090934652977265530...0718994140625e-91;
#   5^140 (98 digits) = 717464813734...875244140625, so
#     1 + 2^-140 = 1.(42 zeros)717464813734...875244140625.
#   0x1p-400 and 0x1p-300 are far below the smallest subnormal of f32 and
#   bf16 (2^-149, 2^-133): read as 0 in rne, error 0 - 2^-n.
#   0.1 in f32 (rne) is 13421773 * 2^-27 = 0.100000001490116119384765625;
#   minus 1/10 that is 1/671088640 = 1.490116119384765625e-09, which ends.
#   1/5 = 0.2 ends in decimal though not in binary.
#   sqrt(2) = 1.414213562373095048801688724209698078569 67187537694...
#   (40 significant digits shown, then "...").
#   2^-1074 = 5^1074 / 10^1074: the 751 digits of 5^1074, e-324.

: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$srcdir/tests/experiments/lib.sh"

P400=3.872591914849318272818030633286351847570219192048790865487762941344416348097685964862682234277014596908057542507554467539370836398992350315522318050653350492002436065270530802738432038373174754090809367646454942400181270162578968846816261130394654088604511343874037265777587890625e-121
P300=4.90909346529772655309577195498627564297521551249944956511154911718710525472171585646009788403733195227718357156513187851316791861042471890280751482410896345225310546445986192853894181098439730703830718994140625e-91
P140=71746481373430634031294954664443705921549411424077607513961896135157303433516062796115875244140625

# The input error of a tiny hex-float is -2^-400 exactly (it was -2^-310,
# the library's stand-in for "far below every subnormal").
run trace 0x1p-400 1
expect_rc 0
expect_line "  note: x1 '0x1p-400' is not exactly representable in f32; read with rne as f32:0x00000000 = 0 (error -$P400)"
run trace --acc bf16 0x1p-300 1
expect_rc 0
expect_line "  note: x1 '0x1p-300' is not exactly representable in bf16; read with rne as bf16:0x0000 = 0 (error -$P300)"

# The sum of the operands as typed is 1 + 2^-400 (120 zeros after the
# point, then the digits of 5^400); the result 1 is off by -2^-400.
P400_DIGITS=$(echo "$P400" | sed -e 's/\.//' -e 's/e-121$//')
ZEROS120=$(printf '%0120d' 0)
run trace 0x1p-400 1
expect_line "  exact sum    1 (of the operands as read: each rounded to f32 with rne)"
expect_line "  typed sum    1.$ZEROS120$P400_DIGITS (exact, of the operands as typed, before any rounding)"
expect_out_has "  typed error  -$P400 = "

# A decimal operand's error ends and is written whole.
run trace 0.1 1
expect_rc 0
expect_line "  note: x1 '0.1' is not exactly representable in f32; read with rne as f32:0x3DCCCCCD = 0.100000001490116119384765625 (error 1.490116119384765625e-09)"

# A sum wider than the rounding event's 128-bit window, exactly.
run trace 1 0x1p-140
expect_rc 0
expect_line "  exact sum    1.000000000000000000000000000000000000000000$P140 (of the operands as read: each rounded to f32 with rne)"
expect_line "  typed sum    the same: every operand as typed is exact in f32"
expect_line "  error    -7.$(echo "$P140" | cut -c2-)e-43 = -6.018531076210112040799931070577897870431567650673088110124808736145496368408203125e-36 ulp (result - exact, ulp 2^-23)"
expect_no_line '  exact    1...'

# The same sum with --explain: the paragraph has the same exact numbers
# (2^-140 / 2^-23 = 2^-117 = 5^117 / 10^117).
run trace --explain 1 0x1p-140
expect_text_has "the error (result - exact) is -7.$(echo "$P140" | cut -c2-)e-43 = -6.018531076210112040799931070577897870431567650673088110124808736145496368408203125e-36 ulp"

# The smallest binary64 subnormal converted to f32: error -2^-1074, all
# 751 digits of 5^1074.
P1074=4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625e-324
4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625e-324
run trace f64:0x0000000000000001 1
expect_rc 0
expect_line "  note: x1 f64:0x0000000000000001 is not exactly representable in f32; converted with rne to f32:0x00000000 (error -$P1074)"

if [ -n "${JSONQ:-}" ] && [ -x "$JSONQ" ]; then
    run trace --json 0x1p-400 1
    expect_rc 0
    expect_jsons operands.0.input_error "-$P400" operands.1.input_error 0
    run trace --json --acc bf16 0x1p-300 1
    expect_jsons operands.0.input_error "-$P300"
    run trace --json 0.1 1
    expect_jsons operands.0.input_error 1.490116119384765625e-09
fi

# A quotient that ends in decimal, one that does not, a square root.
#   f32(1/5) = 13421773 * 2^-26 = 0.20000000298023223876953125: error
#   2.98023223876953125e-09 = 0.2 ulp of 2^-26.
run trace --op div 1 5
expect_rc 0
expect_line '  exact    0.2'
expect_line '  error    2.98023223876953125e-09 = 0.2 ulp (result - exact, ulp 2^-26)'
run trace --op div --fmt bf16 1 3
expect_line '  exact    0.3333333333333333333333333333333333333333...'
run trace --op sqrt 2
expect_line '  exact    1.414213562373095048801688724209698078569...'

# Operands from a file: whitespace and newlines, '#' comments; the same
# output as on the command line.
cat >"$tmp/ops.txt" <<'OPS'
# the paper's addition (T1)
f32:0xC01A0E2E   # the accumulator

	bf16:0xC013
OPS
"$BF16EMU" trace f32:0xC01A0E2E bf16:0xC013 >"$tmp/want" 2>&1
run trace "@$tmp/ops.txt"
expect_rc 0
expect_same_as "$tmp/want"
"$BF16EMU" trace -0.85546875 -0x1p-11 -0.0859375 >"$tmp/want" 2>&1
printf '%s\n' '-0x1p-11#c' '-0.0859375' >"$tmp/ops2.txt"
run trace -- -0.85546875 "@$tmp/ops2.txt"
expect_rc 0
expect_same_as "$tmp/want"
# - reads standard input
ctx="bf16emu trace - (stdin)"
printf '%s\n' '-0.85546875 -0x1p-11' '-0.0859375' \
    | "$BF16EMU" trace - >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc 0
expect_same_as "$tmp/want"

# Errors: exit 2, a message naming the file (and line), nothing on stdout.
run trace "@$tmp/missing.txt"
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu trace: operand file '$tmp/missing.txt': cannot open it"
printf '1\n# two\n2 xyz\n' >"$tmp/bad.txt"
run trace "@$tmp/bad.txt"
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu trace: $tmp/bad.txt:3: operand 3 'xyz': not a number"
ctx="bf16emu trace - (stdin, a bad token)"
printf '1 2\n0x\n' | "$BF16EMU" trace - >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc 2
expect_no_stdout
expect_err_has "bf16emu trace: stdin:2: operand 3 '0x'"
run trace @
expect_rc 2
expect_err_has "expected a file name after '@'"
# an exponent too far out to show its error exactly
run trace 1e-100001 1
expect_rc 2
expect_no_stdout
expect_err_has "operand 1 '1e-100001': the exponent is out of range"

finish
