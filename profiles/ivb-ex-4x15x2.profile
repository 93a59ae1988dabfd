# Ivy Bridge EX, 4 sockets x 15 cores x 2 threads (Xeon E7-4890 v2 class,
# 2.8 GHz): the 60-CPU machine of Zijlstra's 2014 table.  Costs are
# cycles at 2.8 GHz.  Fewer published measurements exist for this
# machine than for the EP: docs/cost-model.md ("Machine profiles") says which
# values are estimates derived from the EP's and from its predecessor.
name = ivb-ex-4x15x2
ghz = 2.8
sockets = 4
cores_per_socket = 15
threads_per_core = 2
numbering = socket-major

# A cache line, by where it comes from.
hit = 4                 # L1 hit (Intel optimization manual)
smt_sibling = 4         # the core's shared L1 (estimate)
same_socket = 88        # EP's 28.3 ns + 3 ns for the 15-core ring (estimate)
other_socket = 280      # EP's 70 ns + one more QPI traversal, 30 ns (estimate)
memory = 378            # 135 ns, MLC local latency of the E7-4800 (estimate)
rmw = 17                # a locked instruction's extra (estimate)
fence = 33              # mfence (estimate)
pause = 10              # PAUSE (Intel optimization manual)
handoff_same_socket = 61   # a contended line handed on: same_socket / 2 + rmw (estimate)
handoff_other_socket = 157 # ... between sockets: other_socket / 2 + rmw (estimate)

# Clearing a page.
clear_core_bytes_per_cycle = 1.7    # 10 fill buffers x 64 B / 135 ns (estimate)
clear_socket_bytes_per_cycle = 6.2  # EP's x 51.2/59.7 peak GB/s (estimate)
clear_cached_bytes_per_cycle = 7.3   # 10 fill buffers x 64 B / same_socket (estimate)
llc_kib = 38400          # 37.5 MiB L3 a socket (Intel ARK)
prefetch_streams = 32    # the L2 streamer's streams (Intel optimization manual)
prefetch_distance = 20   # lines the streamer runs ahead (Intel optimization manual)

# Kernel paths (estimates, as the EP's).
fault_entry = 300
fault_exit = 200
syscall = 150
futex_wake = 2000
wake_latency = 8400
context_switch = 4200
ipi = 580               # IPI sent to handler running: other_socket + fault_entry (estimate)
