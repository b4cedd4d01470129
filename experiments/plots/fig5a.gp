# fig5a.gp -- the cumulative sum over steps of sum_T (delta_lp - delta_hp)
# (the Fig. 5(a) analogue, T10), without and with the fix.  Variables:
# datafile ("step cum_none cum_beta" rows), out.
if (!exists("datafile")) datafile = 'fig5a-cumulative.dat'
if (!exists("out")) out = 'fig5a-cumulative'
set title "Cumulative delta error over steps"
set xlabel "step"
set ylabel "sum over steps of sum_T (delta_lp - delta_hp)"
set grid
set xzeroaxis lt -1
set key top left noenhanced
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 800,500 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 800,500 noenhanced font ",10"
        set output out.'.svg'
    }
    plot datafile using 1:2 with linespoints pt 7 ps 0.5 title "no fix", \
         '' using 1:3 with linespoints pt 5 ps 0.5 title "fix (beta = 2)"
    unset output
}
