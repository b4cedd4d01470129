# sweep-bias.gp -- the bias of O against the mean of V, one line per
# combination of the other swept parameters, error bars from the 95%
# interval.  Variables (gnuplot -e): datafile (blocks written by bf16emu
# sweep: a quoted title line, then "v_mean mean ci_lo ci_hi" rows), out
# (the output path without extension), nseries (the number of blocks).
if (!exists("datafile")) datafile = 'bias-vmean.dat'
if (!exists("out")) out = 'bias-vmean'
if (!exists("nseries")) nseries = 1

set xlabel "mean of V"
set ylabel "mean signed error of O (ulps of BF16)"
set title "Rounding bias of O: computed - exact, 95% intervals"
set key outside right top vertical Left reverse noenhanced
set grid
set xzeroaxis lt -1
set style data yerrorlines
set bars small

do for [t in "pngcairo svg"] {
    if (t eq "pngcairo") {
        set terminal pngcairo size 1000,600 noenhanced font ",10"
        set output out.'.png'
    } else {
        set terminal svg size 1000,600 noenhanced font ",10"
        set output out.'.svg'
    }
    plot for [i=0:nseries-1] datafile index i using 1:2:3:4 \
        title columnheader(1) pointsize 0.7
    unset output
}
