/* A program built against an installed vmsim: takes each lock kind,
 * touches the vm/ objects, and faults a page in through fault/. */
#include <stdio.h>

#include <vmsim/vmsim.h>

int main(void)
{
	struct vs_page_pool *pool;
	struct vs_vma_tree tree;
	struct vs_lock lock;
	struct vs_mm *mm;
	const char *kind;
	char buf[4] = "abc";
	long a;
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
	if (vs_mm_create(&mm, NULL) != 0)
		return 1;
	a = vs_mmap(mm, 0, 4096, VS_PROT_READ | VS_PROT_WRITE,
		    VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	if (a < 0 || vs_write(mm, (unsigned long)a, buf, 4) != 0 ||
	    vs_read(mm, (unsigned long)a, buf, 4) != 0 ||
	    vs_mm_destroy(mm) != 0)
		return 1;
	printf("consumer: %d lock kinds OK\n", i);
	return 0;
}
