# invariance.gp -- how one attention call's output moves with the launch
# batch size, per backend: the elements of O that differ from the output
# at the first batch size asked, and the largest distance in ulps.
# Variables (gnuplot -e), all set by bf16emu invariance:
#   datafile  rows "batch differ1 ulps1 differ2 ulps2 ..." (one pair per
#             backend, "?" where a NaN differs)
#   out       the output path without extension (.png and .svg are written)
#   nb        the number of backends; name1 .. nameNB their names
if (!exists("datafile")) datafile = 'invariance.dat'
if (!exists("out")) out = 'invariance'
if (!exists("nb")) nb = 1

set datafile missing "?"
set border lw 1
set tics out
set logscale x 2
set grid xtics ytics lc rgb "#DDDDDD"
set key top left
set xlabel "launch batch size (the call is entry 0)"
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 1000,800 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 1000,800 noenhanced font ",10"
        set output out.'.svg'
    }
    set multiplot layout 2,1
    set title "Elements of O that differ from the first batch size's"
    set ylabel "elements"
    plot for [i=1:nb] datafile using 1:(column(2*i)) with linespoints \
        pt 7 ps 0.7 title value(sprintf("name%d", i))
    set title "Largest distance from the first batch size's O"
    set ylabel "ulps"
    plot for [i=1:nb] datafile using 1:(column(2*i+1)) with linespoints \
        pt 5 ps 0.7 title value(sprintf("name%d", i))
    unset multiplot
    unset output
}
