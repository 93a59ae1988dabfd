# Ivy Bridge EP, 2 sockets x 10 cores x 2 threads (Xeon E5-2600 v2 class,
# e.g. E5-2680 v2 at 2.8 GHz): the 20-CPU machine of Zijlstra's 2014
# table.  Costs are cycles at 2.8 GHz; measured nanoseconds were
# multiplied by 2.8.  docs/cost-model.md ("Machine profiles") gives the source
# of every value, or why it is an estimate.
name = ivb-ep-2x10x2
ghz = 2.8
sockets = 2
cores_per_socket = 10
threads_per_core = 2
numbering = socket-major

# A cache line, by where it comes from.
hit = 4                 # L1 hit (Intel optimization manual)
smt_sibling = 4         # the core's shared L1 (estimate)
same_socket = 79        # 28.3 ns, MLC L2->L2 HITM, E5-2680 v2
other_socket = 196      # 70 ns, MLC remote LLC->LLC HITM, E5-2680 v2
memory = 173            # 61.7 ns, MLC idle local latency, E5-2680 v2
rmw = 17                # a locked instruction's extra (estimate)
fence = 33              # mfence (estimate)
pause = 10              # PAUSE (Intel optimization manual)
handoff_same_socket = 57   # a contended line handed on: same_socket / 2 + rmw (estimate)
handoff_other_socket = 115 # ... between sockets: other_socket / 2 + rmw (estimate)

# Clearing a page.
clear_core_bytes_per_cycle = 3.7    # 10 fill buffers x 64 B / 61.7 ns (estimate)
clear_socket_bytes_per_cycle = 7.2  # MLC 1:1 read-write, halved for RFO (estimate)
clear_cached_bytes_per_cycle = 8.1   # 10 fill buffers x 64 B / same_socket (estimate)
llc_kib = 25600          # 25 MiB L3 a socket (Intel ARK)
prefetch_streams = 32    # the L2 streamer's streams (Intel optimization manual)
prefetch_distance = 20   # lines the streamer runs ahead (Intel optimization manual)

# Kernel paths (estimates).
fault_entry = 300
fault_exit = 200
syscall = 150
futex_wake = 2000
wake_latency = 8400
context_switch = 4200
ipi = 496               # IPI sent to handler running: other_socket + fault_entry (estimate)
