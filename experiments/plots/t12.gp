# t12.gp -- the Monte-Carlo bias of O with k repeated maxima, without and
# with the fix (T12), 95% intervals.  Variables: datafile ("k none lo hi
# beta lo hi" rows), out.
if (!exists("datafile")) datafile = 't12-bias.dat'
if (!exists("out")) out = 't12-bias'
set title "Mean O_lp - O_exact against the number of repeated maxima"
set xlabel "k (keys at the row maximum)"
set ylabel "mean error of O"
set xrange [0.5:4.5]
set xtics 1
set grid
set xzeroaxis lt -1
set key bottom right noenhanced
set style fill solid 0.5 border -1
set boxwidth 0.35
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 800,500 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 800,500 noenhanced font ",10"
        set output out.'.svg'
    }
    plot datafile using ($1 - 0.18):2 with boxes lc rgb "#c04040" \
             title "no fix", \
         '' using ($1 - 0.18):2:3:4 with yerrorbars lc rgb "black" pt 0 \
             notitle, \
         '' using ($1 + 0.18):5 with boxes lc rgb "#4080c0" \
             title "fix (beta = 2)", \
         '' using ($1 + 0.18):5:6:7 with yerrorbars lc rgb "black" pt 0 \
             notitle
    unset output
}
