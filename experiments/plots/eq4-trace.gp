# eq4-trace.gp -- the signed rounding errors of the Eq. 4 trace (T1), its
# tie counterfactual (T2) and the truncation case (T3), in ulps of BF16 at
# the result.  Variables: datafile ("case error label" rows), out.
if (!exists("datafile")) datafile = 'eq4-trace.dat'
if (!exists("out")) out = 'eq4-trace'
set title "BF16 rounding of an FP32 sum: error (rounded - exact)"
set ylabel "error (ulps of BF16 at the result)"
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [-0.75:0.75]
set xrange [-0.6:2.6]
set grid ytics
set xzeroaxis lt -1
unset key
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 800,500 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 800,500 noenhanced font ",10"
        set output out.'.svg'
    }
    plot datafile using 1:2:xtic(3) with boxes lc rgb "#3060a0", \
         '' using 1:($2 + ($2 < 0 ? -0.06 : 0.06)):(sprintf("%+.4f", $2)) \
         with labels
    unset output
}
