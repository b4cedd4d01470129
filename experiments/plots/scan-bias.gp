# scan-bias.gp -- the bias of O and of delta per (layer, head) from
# bf16emu scan: the mean signed error of the emulated kernel and of the
# kernel with the fix against the exact reference, with 95% intervals
# (mean +- 1.96 standard errors).
# Variables (gnuplot -e), all set by bf16emu scan:
#   datafile  rows "index label o_emu o_emu_ci o_fix o_fix_ci d_emu
#             d_emu_ci d_fix d_fix_ci" ("?" where there is no value)
#   out       the output path without extension (.png and .svg are written)
if (!exists("datafile")) datafile = 'scan-bias.dat'
if (!exists("out")) out = 'scan-bias'

set datafile missing "?"
set border lw 1
set tics out
set xtics rotate by 90 right font ",8"
set grid ytics lc rgb "#DDDDDD"
set key top right
set xrange [-0.5:*]
set offsets 0, 0.6, 0, 0
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 1100,800 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 1100,800 noenhanced font ",10"
        set output out.'.svg'
    }
    set multiplot layout 2,1
    set title "Bias of O per layer and head (95% intervals)"
    set ylabel "mean (computed - exact), BF16 ulps"
    plot datafile using ($1-0.15):3:4:xtic(2) with yerrorbars pt 7 ps 0.6 \
             lc rgb "#D1495B" title "emulated", \
         '' using ($1+0.15):5:6 with yerrorbars pt 5 ps 0.6 \
             lc rgb "#2E86AB" title "with the fix", \
         0 with lines lc rgb "#888888" notitle
    set title "Bias of delta = rowsum(dO o O) per layer and head (95% intervals)"
    set ylabel "mean (computed - exact)"
    plot datafile using ($1-0.15):7:8:xtic(2) with yerrorbars pt 7 ps 0.6 \
             lc rgb "#D1495B" title "emulated", \
         '' using ($1+0.15):9:10 with yerrorbars pt 5 ps 0.6 \
             lc rgb "#2E86AB" title "with the fix", \
         0 with lines lc rgb "#888888" notitle
    unset multiplot
    unset output
}
