/* A program built against an installed vmsim: takes each lock kind and
 * touches the vm/ objects. */
#include <stdio.h>
#include <vmsim/vmsim.h>

int main(void)
{
	struct vs_page_pool *pool;
	struct vs_vma_tree tree;
	struct vs_lock lock;
	const char *kind;
	int i, err;

	for (i = 0; (kind = vs_lock_kind_name(i)); i++) {
		err = vs_lock_init(&lock, kind, NULL);
		if (err) {
			fprintf(stderr, "%s: %s\n", kind, vs_strerror(err));
			return 1;
		}
		vs_lock_read_lock(&lock);
		vs_lock_read_unlock(&lock);
		vs_lock_write_lock(&lock);
		vs_lock_write_unlock(&lock);
		vs_lock_destroy(&lock);
	}
	vs_rcu_read_lock();
	vs_rcu_read_unlock();
	if (vs_page_pool_create(&pool, 16) != 0 ||
	    vs_vma_tree_init(&tree) != 0)
		return 1;
	vs_vma_tree_destroy(&tree);
	vs_page_pool_destroy(pool);
	printf("consumer: %d lock kinds OK\n", i);
	return 0;
}
