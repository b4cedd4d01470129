# fig6.gp -- the Eq. 5 prefix error of one output element along the keys
# (the Fig. 6 analogue, T11), with the keys where P~ = 1 marked.
# Variables: datafile ("t error_ulps p_is_one" rows), out.
if (!exists("datafile")) datafile = 'fig6-prefix.dat'
if (!exists("out")) out = 'fig6-prefix'
set title "Prefix error of sum P~V: BF16(FP32 chain) - exact"
set xlabel "key position t"
set ylabel "error (ulps of BF16 at the prefix)"
set grid
set xzeroaxis lt -1
set key top right noenhanced
do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 900,500 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 900,500 noenhanced font ",10"
        set output out.'.svg'
    }
    plot datafile using 1:2 with steps lw 2 title "prefix error", \
         '' using 1:($3 > 0 ? $2 : 1/0) with points pt 7 ps 1.2 \
         title "P~ = 1"
    unset output
}
