# Guest script: the verifier's work for several scx_fdl builds in one boot. Each build named as an
# argument (installed in /usr/bin by FDL_EXTRA_BINS) is started, and stopped as soon as it has
# logged its load ("loaded in N s; instructions verified: PROG COUNT, ..."); the counts (the
# kernel's verified_insns per program) depend only on the kernel and the build, not on the host's
# load. Host side:
#   FDL_EXTRA_BINS="/tmp/a/scx_fdl-a /tmp/b/scx_fdl-b" vm/run.sh --log LOG bench/guest/verified.sh scx_fdl-a scx_fdl-b
#   grep '^VERIFIED' LOG
. ./lib.sh
for b in "$@"; do
    command -v "$b" > /dev/null || { fail "no build $b in the guest (FDL_EXTRA_BINS)"; continue; }
    "$b" > "/tmp/$b.log" 2>&1 &
    pid=$!
    i=0
    # Bounded: 15 minutes of guest time for a load (an emulated CPU is slow).
    while ! grep -q "loaded in" "/tmp/$b.log" && kill -0 $pid 2>/dev/null && [ $i -lt 9000 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -TERM $pid 2>/dev/null
    wait $pid
    if grep -q "loaded in" "/tmp/$b.log"; then
        sed -n "s/.*\(loaded in .*\)/VERIFIED $b \1/p" "/tmp/$b.log" | head -1
    else
        fail "$b logged no load"
        sed 's/^/    /' "/tmp/$b.log" | tail -20
    fi
done
exit $FAILED
