/* sdpa_policy.c -- --policy sdpa and the named SDPA descriptions */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <string.h>

#include "experiments/cli.h"
#include "experiments/sdpa_policy.h"

bool
sdpa_policy_named(const char *v, const fa_kernel **k, bool *sdpa)
{
    *k = NULL;
    *sdpa = false;
    if (v == NULL)
        return false;
    if (strcmp(v, "sdpa") == 0) {
        *sdpa = true;
        return true;
    }
    if (fa_policy_parse(v) >= 0)
        return false;
    /* PyTorch's name of the backend (SDPBackend.FLASH_ATTENTION) */
    *k = fa_kernel_by_name(strcmp(v, "flash") == 0 ? "fa2" : v);
    return *k != NULL;
}

bool
sdpa_policy_parse_backends(const char *cmd, const char *v, unsigned *flags)
{
    static const struct
    {
        const char *name;
        unsigned flag;
    } names[] = {{"cudnn", SDPA_EN_CUDNN},
                 {"flash", SDPA_EN_FLASH},
                 {"efficient", SDPA_EN_EFFICIENT},
                 {"math", SDPA_EN_MATH}};
    unsigned f = 0;
    const char *p = v;

    if (v == NULL || *v == '\0') {
        cli_error(cmd, "--sdpa-backends: expected a comma list of cudnn, "
                       "flash, efficient, math");
        return false;
    }
    for (;;) {
        size_t n = strcspn(p, ","), i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0)
                break;
        if (i == sizeof names / sizeof names[0]) {
            cli_error(cmd,
                      "--sdpa-backends '%s': unknown backend '%.*s' "
                      "(expected cudnn, flash, efficient or math)",
                      v, (int)n, p);
            return false;
        }
        f |= names[i].flag;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    *flags = f;
    return true;
}

bool
sdpa_policy_pick(const char *cmd, const sdpa_case *c, const fa_kernel **k,
                 sdpa_choice *ch, bool *split_auto, unsigned *splits)
{
    sdpa_backend b = sdpa_choose_pt211_h200(c, ch);
    const char *name = sdpa_backend_description(b);

    *k = NULL;
    *split_auto = false;
    *splits = 0;
    if (b == SDPA_BACKEND_ERROR) {
        cli_error(cmd,
                  "--policy sdpa: PyTorch 2.11 on sm90 (H100, H200: 132 SMs) runs no backend "
                  "for this call (%s)",
                  ch->reason);
        return false;
    }
    *k = fa_kernel_by_name(name);
    if (*k == NULL) {
        cli_error(cmd,
                  "--policy sdpa: PyTorch 2.11 on sm90 (H100, H200: 132 SMs) runs the %s "
                  "backend here (%s; %s), and there is no description "
                  "'%s' yet",
                  sdpa_backend_name(b), ch->variant, ch->reason, name);
        return false;
    }
    *split_auto = b == SDPA_BACKEND_FLASH;
    if (b == SDPA_BACKEND_CUDNN && ch->splits > 1)
        *splits = ch->splits; /* the decode engine's key splits */
    return true;
}

bool
sdpa_policy_causal_align(const char *cmd, const sdpa_choice *ch, int64_t nq,
                         int64_t nk, bool *top_left)
{
    int a = ch->backend == SDPA_BACKEND_FLASH       ? 0
            : ch->backend == SDPA_BACKEND_EFFICIENT ? 1
            : ch->backend == SDPA_BACKEND_MATH      ? 1
            : ch->backend == SDPA_BACKEND_CUDNN && nq == 1 ? 1
                                                           : -1;

    if (a < 0) {
        cli_error(cmd,
                  "--policy sdpa: where %s aligns a causal mask with Nq = "
                  "%lld != Nk = %lld is not measured; give --causal-align "
                  "top-left or bottom-right",
                  sdpa_backend_name(ch->backend), (long long)nq,
                  (long long)nk);
        return false;
    }
    *top_left = a == 1;
    fprintf(stderr,
            "bf16emu %s: --policy sdpa: the causal mask aligned %s (%s's "
            "is_causal with Nq != Nk)\n",
            cmd, a == 1 ? "top-left" : "bottom-right",
            sdpa_backend_name(ch->backend));
    return true;
}

void
sdpa_policy_note(const char *cmd, const sdpa_choice *ch, const fa_kernel *k)
{
    fprintf(stderr, "bf16emu %s: --policy sdpa: %s (%s), description %s: %s\n",
            cmd, sdpa_backend_name(ch->backend), ch->variant,
            k != NULL ? k->name : "none", ch->reason);
}

sdpa_case
sdpa_policy_case(const fa_cli_launch *l, size_t nh, size_t nhkv, size_t nq,
                 size_t nk, size_t d, bool f16, bool causal)
{
    sdpa_case sc = sdpa_case_default();

    sc.batch = (int64_t)l->batch;
    sc.heads = (int64_t)l->heads;
    sc.kv_heads = (int64_t)l->kv_heads;
    sc.enable_gqa = nhkv != nh;
    sc.nq = (int64_t)nq;
    sc.nk = (int64_t)nk;
    sc.d = (int64_t)d;
    sc.dtype = f16 ? SDPA_DT_F16 : SDPA_DT_BF16;
    sc.causal = causal;
    return sc;
}
