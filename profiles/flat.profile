# A machine for tests: 2 sockets x 64 cores x 2 threads (256 CPUs, the
# most a profile may have), 1 GHz so that a cycle is a nanosecond, and
# every line transfer the same 100 cycles whatever the distance.  Round
# numbers, not a real machine.
name = flat
ghz = 1
sockets = 2
cores_per_socket = 64
threads_per_core = 2
numbering = socket-major

hit = 1
smt_sibling = 100
same_socket = 100
other_socket = 100
memory = 100
rmw = 10
fence = 20
pause = 1

clear_core_bytes_per_cycle = 8
clear_socket_bytes_per_cycle = 32

fault_entry = 100
fault_exit = 100
syscall = 100
futex_wake = 1000
wake_latency = 1000
context_switch = 1000
ipi = 1000
