/* SPDX-License-Identifier: MIT */
/*
 * vcpu/client.c - the engine's clients (vcpu/client.h): their hooks,
 * called in the order they registered, and their state per machine.
 *
 * Locking: registration runs in constructors, before any machine; the
 * rest on the machine's host thread (or the vCPU whose work ends),
 * between events.
 */
#include <errno.h>

#include "internal.h"

static struct vs__vcpu_client *clients[VS__VCPU_CLIENTS];
static unsigned int nr_clients;

void vs__vcpu_client_register(struct vs__vcpu_client *c)
{
	if (nr_clients == VS__VCPU_CLIENTS)
		vs__vcpu_die("vcpu: too many clients", ENOSPC);
	c->id = nr_clients;
	clients[nr_clients++] = c;
}

void **vs__vcpu_state(const struct vs__vcpu_client *c)
{
	struct vs_machine *m = vs__vcpu_machine;

	return m && m->cur ? &m->client[c->id] : NULL;
}

void vs__clients_context_end(int ctx, int dropped)
{
	unsigned int i;

	for (i = 0; i < nr_clients; i++)
		if (clients[i]->context_end)
			clients[i]->context_end(ctx, dropped);
}

size_t vs__clients_describe_context(int ctx, char *buf, size_t len)
{
	size_t at = 0;
	unsigned int i;

	if (len)
		buf[0] = 0;
	for (i = 0; i < nr_clients && at + 1 < len; i++)
		if (clients[i]->describe_context)
			at += clients[i]->describe_context(ctx, buf + at,
							   len - at);
	return at;
}

int vs__clients_describe_addr(uintptr_t addr, char *buf, size_t len)
{
	unsigned int i;
	int w = 0;

	for (i = 0; i < nr_clients && w <= 0; i++)
		if (clients[i]->describe_addr)
			w = clients[i]->describe_addr(addr, buf, len);
	return w;
}

void vs__clients_abandon(void)
{
	unsigned int i;

	for (i = 0; i < nr_clients; i++)
		if (clients[i]->abandon)
			clients[i]->abandon();
}

void vs__clients_machine_end(struct vs_machine *m)
{
	unsigned int i;

	for (i = 0; i < nr_clients; i++) {
		if (m->client[i] && clients[i]->machine_end)
			clients[i]->machine_end(m->client[i]);
		m->client[i] = NULL;
	}
}
