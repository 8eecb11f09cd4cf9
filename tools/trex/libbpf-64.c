/*
 * libbpf-64.so for a TRex install that lacks it (TRex links its capture filters
 * against this library; without it _t-rex-64 does not start at all).
 *
 * TRex asks for three calls: bpf_verify(filter) -> nonzero if the pcap filter
 * expression compiles; bpfjit_compile(filter) -> a function TRex calls as
 * func(NULL, &args) to match a frame; bpfjit_destroy(func). Here the filter is
 * compiled with libpcap and run by libpcap's BPF interpreter (bpf_filter); the
 * function handed to TRex is a libffi closure bound to the compiled program.
 * Same results as TRex's JIT, without the JIT's speed (captures only).
 */
#include <ffi.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct bpf_args {          /* the layout TRex passes (NetBSD's bpf_args_t) */
    const uint8_t *pkt;
    size_t wirelen;
    size_t buflen;
    uint32_t *mem;
    void *arg;
} bpf_args_t;

struct compiled {
    struct compiled *next;         /* every live filter, to find one by its code */
    struct bpf_program program;
    ffi_closure *closure;
    ffi_cif cif;
    ffi_type *arg_types[2];
    void *code;
};

static struct compiled *live;

static int compile(const char *filter, struct bpf_program *program) {
    pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
    if (!dead)
        return -1;
    int rc = pcap_compile(dead, program, filter, 1, PCAP_NETMASK_UNKNOWN);
    pcap_close(dead);
    return rc;
}

int bpf_verify(const char *filter) {
    struct bpf_program program;
    if (compile(filter, &program) != 0)
        return 0;
    pcap_freecode(&program);
    return 1;
}

static void run(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif;
    struct compiled *c = data;
    const bpf_args_t *a = *(bpf_args_t **)args[1];
    *(ffi_arg *)ret = bpf_filter(c->program.bf_insns, a->pkt, (u_int)a->wirelen,
                                 (u_int)a->buflen);
}

void *bpfjit_compile(const char *filter) {
    struct compiled *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (compile(filter, &c->program) != 0)
        goto fail;
    c->closure = ffi_closure_alloc(sizeof(ffi_closure), &c->code);
    if (!c->closure)
        goto fail_code;
    c->arg_types[0] = &ffi_type_pointer;
    c->arg_types[1] = &ffi_type_pointer;
    if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, 2, &ffi_type_uint32, c->arg_types) != FFI_OK ||
        ffi_prep_closure_loc(c->closure, &c->cif, run, c, c->code) != FFI_OK)
        goto fail_closure;
    /* the closure's code address is what TRex calls; the closure keeps c */
    c->next = live;
    live = c;
    return c->code;
fail_closure:
    ffi_closure_free(c->closure);
fail_code:
    pcap_freecode(&c->program);
fail:
    free(c);
    return NULL;
}

void bpfjit_destroy(void *code) {
    for (struct compiled **at = &live; *at; at = &(*at)->next) {
        struct compiled *c = *at;
        if (c->code == code) {
            *at = c->next;
            ffi_closure_free(c->closure);
            pcap_freecode(&c->program);
            free(c);
            return;
        }
    }
}
