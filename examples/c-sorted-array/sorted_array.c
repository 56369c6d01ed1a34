// sorted-array: a memtable in C. Entries live in one array of pointers
// kept in key order; inserts append to a pending run, which is sorted and
// merged in before any read (the "vector" strategy of the Rust plugins,
// written against memlab's WIT with plain wit-bindgen C bindings).
//
// Ownership follows wit-bindgen's C conventions: arguments to an export
// belong to the export (it frees them); what it returns is malloc'd and
// freed by the generated post-return functions. The cursor's chunks are
// not returned but handed to `output.put` (output contract 1), which the
// host reads during the call, so the export frees them itself.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memtable_plugin.h"

typedef struct memtable memtable_t;
typedef exports_memlab_strategy_memtable_cursor_t cursor_t;
typedef exports_memlab_strategy_memtable_packed_t packed_t;
typedef exports_memlab_strategy_memtable_error_t error_t_;

#define NAME "sorted-array"
#define VERSION "0.1.0"
#define DEFAULT_CAPACITY 1024u

// One entry: timestamp, ref and key, in one allocation.
typedef struct record {
    uint64_t timestamp;
    uint64_t ref;
    uint32_t len;
    uint8_t key[];
} record_t;

// A pending entry and its arrival, for the "later wins on a tie" rule.
typedef struct pending {
    record_t *record;
    uint64_t seq;
} pending_t;

struct memtable {
    record_t **sorted;
    size_t len, cap;
    pending_t *pending;
    size_t pending_len, pending_cap;
    uint64_t seq;
    uint64_t capacity_param;
    size_t record_bytes;
    int frozen;
};

// The instance's one memtable (memtable contract 0).
static memtable_t *table;

struct exports_memlab_strategy_memtable_cursor_t {
    memtable_t *table;
    size_t next;
};

// Growable output in the packed layout (types contract 1).
typedef struct out {
    uint8_t *data;
    size_t len, cap;
    uint32_t *ends;
    size_t count, ends_cap;
} out_t;

// A bug or exhaustion: tell the host why (its report shows the message),
// then trap. The instance is poisoned from here on (types contract 6).
static _Noreturn void die(const char *message) {
    memtable_plugin_string_t text = {(uint8_t *)message, strlen(message)};
    memlab_strategy_diagnostics_panicked(&text);
    abort();
}

static void *grow(void *ptr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return ptr;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(ptr, cap2 * size);
    if (!p) die("sorted-array: out of linear memory growing an array");
    *cap = cap2;
    return p;
}

static void out_bytes(out_t *o, const void *bytes, size_t n) {
    o->data = grow(o->data, &o->cap, o->len + n, 1);
    memcpy(o->data + o->len, bytes, n);
    o->len += n;
}

static void out_end(out_t *o) {
    o->ends = grow(o->ends, &o->ends_cap, o->count + 1, sizeof(uint32_t));
    o->ends[o->count++] = (uint32_t)o->len;
}

static void out_entry(out_t *o, const record_t *r) {
    out_bytes(o, &r->timestamp, 8);  // wasm is little-endian, as the layout
    out_bytes(o, &r->ref, 8);
    out_bytes(o, r->key, r->len);
    out_end(o);
}

// Types contract 1: the records, then each one's end, then the count.
static void out_finish(out_t *o, packed_t *ret) {
    uint32_t count = (uint32_t)o->count;
    if (o->count) out_bytes(o, o->ends, 4 * o->count);
    out_bytes(o, &count, 4);
    free(o->ends);
    ret->ptr = o->data;
    ret->len = o->len;
}

// Hands a finished batch to the host as the call's answer, then frees it.
static void out_put(out_t *o) {
    packed_t answer;
    out_finish(o, &answer);
    memtable_plugin_list_u8_t bytes = {answer.ptr, answer.len};
    memlab_strategy_output_put(&bytes);
    free(answer.ptr);
}

static memtable_plugin_string_t string_of(const char *text) {
    memtable_plugin_string_t s;
    s.len = strlen(text);
    s.ptr = malloc(s.len ? s.len : 1);
    if (!s.ptr) die("sorted-array: out of linear memory for a string");
    memcpy(s.ptr, text, s.len);
    return s;
}

static void fail(error_t_ *err, uint8_t tag, const char *message) {
    err->tag = tag;
    // Every variant that carries text has its string at the same place.
    err->val.other = string_of(message);
}

// An error naming a parameter: `<before>`name`<after>`.
static void fail_param(error_t_ *err, const char *before, const memtable_plugin_string_t *name, const char *after) {
    size_t a = strlen(before), b = strlen(after);
    memtable_plugin_string_t s = {malloc(a + name->len + b + 2), a + name->len + b + 2};
    if (!s.ptr) die("sorted-array: out of linear memory for a string");
    memcpy(s.ptr, before, a);
    s.ptr[a] = '`';
    memcpy(s.ptr + a + 1, name->ptr, name->len);
    s.ptr[a + 1 + name->len] = '`';
    memcpy(s.ptr + a + 2 + name->len, after, b);
    err->tag = MEMLAB_STRATEGY_TYPES_ERROR_BAD_PARAM;
    err->val.bad_param = s;
}

static int compare_keys(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int compare_pending(const void *x, const void *y) {
    const pending_t *a = x, *b = y;
    int c = compare_keys(a->record->key, a->record->len, b->record->key, b->record->len);
    if (c) return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

// Memtable contract 2: the higher timestamp wins; on a tie, the later.
static int newer_wins(const record_t *older, const record_t *newer) {
    return newer->timestamp >= older->timestamp;
}

static void drop_record(memtable_t *t, record_t *r) {
    t->record_bytes -= sizeof(record_t) + r->len;
    free(r);
}

// Sorts the pending run and merges it into the sorted array.
static void settle(memtable_t *t) {
    if (!t->pending_len) return;
    qsort(t->pending, t->pending_len, sizeof(pending_t), compare_pending);
    // Keep each key's winner among the pending entries (they are in
    // arrival order within a key).
    size_t kept = 0;
    for (size_t i = 0; i < t->pending_len; i++) {
        record_t *r = t->pending[i].record;
        if (kept) {
            record_t *last = t->pending[kept - 1].record;
            if (!compare_keys(last->key, last->len, r->key, r->len)) {
                if (newer_wins(last, r)) {
                    drop_record(t, last);
                    t->pending[kept - 1].record = r;
                } else {
                    drop_record(t, r);
                }
                continue;
            }
        }
        t->pending[kept++].record = r;
    }
    size_t room = t->len + kept;
    record_t **merged = malloc(room * sizeof(record_t *) + 1);
    if (!merged) die("sorted-array: out of linear memory merging the pending run");
    size_t i = 0, j = 0, n = 0;
    while (i < t->len || j < kept) {
        if (j == kept) { merged[n++] = t->sorted[i++]; continue; }
        if (i == t->len) { merged[n++] = t->pending[j++].record; continue; }
        record_t *a = t->sorted[i], *b = t->pending[j].record;
        int c = compare_keys(a->key, a->len, b->key, b->len);
        if (c < 0) {
            merged[n++] = a; i++;
        } else if (c > 0) {
            merged[n++] = b; j++;
        } else {
            // The pending entry arrived later than the one held.
            if (newer_wins(a, b)) { merged[n++] = b; drop_record(t, a); }
            else { merged[n++] = a; drop_record(t, b); }
            i++; j++;
        }
    }
    free(t->sorted);
    t->sorted = merged;
    t->len = n;
    t->cap = room;
    t->pending_len = 0;
}

// The first index whose key is >= key.
static size_t lower_bound(const memtable_t *t, const uint8_t *key, size_t len) {
    size_t lo = 0, hi = t->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_keys(t->sorted[mid]->key, t->sorted[mid]->len, key, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// A packed batch read in place (types contract 1).
typedef struct view {
    const uint8_t *records;
    const uint8_t *ends;
    size_t count;
} view_t;

static uint32_t view_end(const view_t *v, size_t i) {
    uint32_t end;
    memcpy(&end, v->ends + 4 * i, 4);
    return end;
}

// Reads the trailer and checks that the ends never decrease and stay
// inside the records; 0 when the batch is malformed.
static int packed_view(const packed_t *p, view_t *v) {
    if (p->len < 4) return 0;
    uint32_t count;
    memcpy(&count, p->ptr + p->len - 4, 4);
    size_t records_len = p->len - 4;
    if (count > records_len / 4) return 0;
    records_len -= 4 * (size_t)count;
    v->records = p->ptr;
    v->ends = p->ptr + records_len;
    v->count = count;
    uint32_t prev = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t end = view_end(v, i);
        if (end < prev || end > records_len) return 0;
        prev = end;
    }
    return 1;
}

// Parses a decimal u64 strictly: digits only, no overflow.
static int parse_u64(const uint8_t *text, size_t len, uint64_t *value) {
    if (!len) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') return 0;
        uint64_t digit = text[i] - '0';
        if (v > (UINT64_MAX - digit) / 10) return 0;
        v = v * 10 + digit;
    }
    *value = v;
    return 1;
}

static int names(const memtable_plugin_string_t *s, const char *name) {
    return s->len == strlen(name) && !memcmp(s->ptr, name, s->len);
}

// Memtable contract 0: `create` comes first; anything else is a host bug.
static memtable_t *the_table(void) {
    if (!table) die("sorted-array: called before create (memtable contract 0)");
    return table;
}

bool exports_memlab_strategy_memtable_create(exports_memlab_strategy_memtable_params_t *params, error_t_ *err) {
    uint64_t capacity = DEFAULT_CAPACITY;
    bool ok = true;
    if (table) {
        fail(err, MEMLAB_STRATEGY_TYPES_ERROR_INVALID_STATE, "this instance's memtable exists already (memtable contract 0)");
        ok = false;
    }
    for (size_t i = 0; i < params->len && ok; i++) {
        memtable_plugin_string_t *key = &params->ptr[i].f0, *value = &params->ptr[i].f1;
        if (!names(key, "initial_capacity")) {
            fail_param(err, "unknown parameter ", key, " (sorted-array takes initial_capacity)");
            ok = false;
        } else if (!parse_u64(value->ptr, value->len, &capacity) || capacity > (1u << 24)) {
            fail_param(err, "initial_capacity = ", value, ": not a whole number from 0 to 16777216");
            ok = false;
        }
    }
    exports_memlab_strategy_memtable_params_free(params);
    if (!ok) return false;
    memtable_t *t = calloc(1, sizeof(memtable_t));
    if (!t) die("sorted-array: out of linear memory creating the memtable");
    t->capacity_param = capacity;
    t->pending = grow(NULL, &t->pending_cap, capacity ? capacity : 1, sizeof(pending_t));
    table = t;
    return true;
}

bool exports_memlab_strategy_memtable_insert(packed_t *entries, error_t_ *err) {
    memtable_t *t = the_table();
    bool ok = true;
    view_t v = {0};
    if (t->frozen) {
        fail(err, MEMLAB_STRATEGY_TYPES_ERROR_INVALID_STATE, "insert after a cursor froze the memtable");
        ok = false;
    } else if (!packed_view(entries, &v)) {
        fail(err, MEMLAB_STRATEGY_TYPES_ERROR_CORRUPT, "insert: the batch's ends are not a valid packed layout");
        ok = false;
    }
    uint32_t start = 0;
    for (size_t i = 0; ok && i < v.count; i++) {
        uint32_t end = view_end(&v, i);
        if (end - start < 16) {
            fail(err, MEMLAB_STRATEGY_TYPES_ERROR_CORRUPT, "insert: an entry shorter than its 16-byte timestamp and ref");
            ok = false;
            break;
        }
        size_t len = end - start - 16;
        record_t *r = malloc(sizeof(record_t) + len);
        if (!r) die("sorted-array: out of linear memory for an entry");
        memcpy(&r->timestamp, v.records + start, 8);
        memcpy(&r->ref, v.records + start + 8, 8);
        r->len = (uint32_t)len;
        memcpy(r->key, v.records + start + 16, len);
        t->record_bytes += sizeof(record_t) + len;
        t->pending = grow(t->pending, &t->pending_cap, t->pending_len + 1, sizeof(pending_t));
        t->pending[t->pending_len].record = r;
        t->pending[t->pending_len++].seq = t->seq++;
        start = end;
    }
    exports_memlab_strategy_memtable_packed_free(entries);
    return ok;
}

void exports_memlab_strategy_memtable_get(packed_t *keys, packed_t *ret) {
    memtable_t *t = the_table();
    out_t o = {0};
    // Memtable contract 8: a malformed batch gets no records.
    view_t v;
    if (packed_view(keys, &v)) {
        settle(t);
        uint32_t start = 0;
        for (size_t i = 0; i < v.count; i++) {
            uint32_t end = view_end(&v, i);
            const uint8_t *key = v.records + start;
            size_t len = end - start, at = lower_bound(t, key, len);
            if (at < t->len && !compare_keys(t->sorted[at]->key, t->sorted[at]->len, key, len)) out_entry(&o, t->sorted[at]);
            else out_end(&o);  // an empty record: absent
            start = end;
        }
    }
    exports_memlab_strategy_memtable_packed_free(keys);
    out_finish(&o, ret);
}

void exports_memlab_strategy_memtable_scan(memtable_plugin_list_u8_t *start, memtable_plugin_list_u8_t *maybe_end, uint32_t limit, packed_t *ret) {
    memtable_t *t = the_table();
    out_t o = {0};
    settle(t);
    for (size_t i = lower_bound(t, start->ptr, start->len); i < t->len && o.count < limit; i++) {
        record_t *r = t->sorted[i];
        if (maybe_end && compare_keys(r->key, r->len, maybe_end->ptr, maybe_end->len) >= 0) break;
        out_entry(&o, r);
    }
    memtable_plugin_list_u8_free(start);
    if (maybe_end) memtable_plugin_list_u8_free(maybe_end);
    out_finish(&o, ret);
}

exports_memlab_strategy_memtable_own_cursor_t exports_memlab_strategy_memtable_open_cursor(void) {
    memtable_t *t = the_table();
    settle(t);
    t->frozen = 1;
    cursor_t *c = calloc(1, sizeof(cursor_t));
    if (!c) die("sorted-array: out of linear memory for a cursor");
    c->table = t;
    return exports_memlab_strategy_memtable_cursor_new(c);
}

void exports_memlab_strategy_memtable_method_cursor_next(cursor_t *c, uint32_t max_bytes) {
    out_t o = {0};
    memtable_t *t = c->table;
    // At least one entry while any remain; stop once the batch reaches max_bytes.
    while (c->next < t->len) {
        out_entry(&o, t->sorted[c->next++]);
        if (o.len >= max_bytes) break;
    }
    out_put(&o);
}

void exports_memlab_strategy_memtable_describe(exports_memlab_strategy_memtable_description_t *ret) {
    memtable_t *t = the_table();
    char digits[24];
    size_t n = sizeof digits;
    digits[--n] = 0;
    uint64_t v = t->capacity_param;
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    ret->name = string_of(NAME);
    ret->version = string_of(VERSION);
    ret->params.len = 1;
    ret->params.ptr = malloc(sizeof(*ret->params.ptr));
    if (!ret->params.ptr) die("sorted-array: out of linear memory describing");
    ret->params.ptr[0].f0 = string_of("initial_capacity");
    ret->params.ptr[0].f1 = string_of(digits + n);
}

void exports_memlab_strategy_memtable_stats(exports_memlab_strategy_memtable_counters_t *ret) {
    memtable_t *t = the_table();
    settle(t);
    // Memtable contract 6: the bytes the index owns, records and arrays.
    uint64_t index_bytes = t->record_bytes + t->cap * sizeof(record_t *) + t->pending_cap * sizeof(pending_t);
    ret->len = 2;
    ret->ptr = malloc(2 * sizeof(*ret->ptr));
    if (!ret->ptr) die("sorted-array: out of linear memory for stats");
    ret->ptr[0].f0 = string_of("entries");
    ret->ptr[0].f1 = t->len;
    ret->ptr[1].f0 = string_of("index-bytes");
    ret->ptr[1].f1 = index_bytes;
}

// The memtable lives as long as the instance; a cursor is only a position.
void exports_memlab_strategy_memtable_cursor_destructor(cursor_t *c) {
    free(c);
}
