/* SPDX-License-Identifier: MIT */
/*
 * vcpu/switch.S - the vCPU context switch, x86-64 System V.
 *
 * void vs__ctx_switch(void **save_sp, void *load_sp)
 *
 * Saves what the ABI makes callee-saved (rbx, rbp, r12-r15, and the
 * control bits of MXCSR and the x87 control word) on the current stack,
 * stores the stack pointer in *save_sp, loads load_sp and restores the
 * same from there.  A new context's stack is laid out by context.c
 * (ctx_make()) so that
 * the restore "returns" into vs__ctx_start with r12 = the function and
 * r13 = its argument.
 */
#if defined(__x86_64__)
	.text
	.globl	vs__ctx_switch
	.hidden	vs__ctx_switch
	.type	vs__ctx_switch, @function
vs__ctx_switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	vs__ctx_switch, .-vs__ctx_switch

	.globl	vs__ctx_start
	.hidden	vs__ctx_start
	.type	vs__ctx_start, @function
vs__ctx_start:
	.cfi_startproc
	.cfi_undefined rip
	movq	%r13, %rdi
	callq	*%r12
	ud2
	.cfi_endproc
	.size	vs__ctx_start, .-vs__ctx_start
#endif
	.section .note.GNU-stack, "", @progbits
