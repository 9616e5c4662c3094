#include "AllocationCounter.h"
#include "CJack.h"
#include <stdatomic.h>
#include <stddef.h>

// glibc's own entry points, which the replacements forward to.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_ulong realtime_events;
static atomic_ulong all_events;

static inline void count_event(void) {
    atomic_fetch_add_explicit(&all_events, 1, memory_order_relaxed);
    if (cjack_in_realtime()) atomic_fetch_add_explicit(&realtime_events, 1, memory_order_relaxed);
}

unsigned long allocation_counter_realtime_events(void) { return atomic_load(&realtime_events); }
unsigned long allocation_counter_all_events(void) { return atomic_load(&all_events); }
void allocation_counter_reset(void) {
    atomic_store(&realtime_events, 0);
    atomic_store(&all_events, 0);
}

// Weak, so that a build that links RealtimeSanitizer (which intercepts these
// itself) uses the sanitizer's versions instead.
__attribute__((weak)) void *malloc(size_t size) { count_event(); return __libc_malloc(size); }
__attribute__((weak)) void *calloc(size_t count, size_t size) { count_event(); return __libc_calloc(count, size); }
__attribute__((weak)) void *realloc(void *pointer, size_t size) { count_event(); return __libc_realloc(pointer, size); }
__attribute__((weak)) void free(void *pointer) { if (pointer) count_event(); __libc_free(pointer); }
__attribute__((weak)) void *memalign(size_t alignment, size_t size) { count_event(); return __libc_memalign(alignment, size); }
__attribute__((weak)) void *aligned_alloc(size_t alignment, size_t size) { count_event(); return __libc_memalign(alignment, size); }
__attribute__((weak)) int posix_memalign(void **out, size_t alignment, size_t size) {
    count_event();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12; // ENOMEM
    *out = pointer;
    return 0;
}
