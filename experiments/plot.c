/* plot.c -- running the gnuplot scripts (plot.h) */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/plot.h"

extern char **environ;

const char *
plot_script_dir(void)
{
    static const char *const in_tree = SRCDIR "/experiments/plots";
    const char *env = getenv("BF16EMU_PLOTS");
    struct stat st;

    if (env != NULL && *env != '\0')
        return env;
    if (stat(in_tree, &st) == 0 && S_ISDIR(st.st_mode))
        return in_tree;
    return BF16EMU_PKGDATADIR "/plots";
}

bool
plot_quote(char *buf, size_t n, const char *s)
{
    size_t len = strlen(s);

    if (strpbrk(s, "'\n\r") != NULL || len + 3 > n)
        return false;
    buf[0] = '\'';
    memcpy(buf + 1, s, len);
    buf[len + 1] = '\'';
    buf[len + 2] = '\0';
    return true;
}

int
plot_run(const char *script, const char *vars, const char *log, char *why,
         size_t whylen)
{
    char path[4096];
    char *argv[5];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int rc, status;
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", plot_script_dir(), script);
    if (stat(path, &st) != 0) {
        snprintf(why, whylen, "%s: no such plot script", path);
        return -1;
    }
    argv[0] = (char *)"gnuplot";
    argv[1] = (char *)"-e";
    argv[2] = (char *)vars;
    argv[3] = path;
    argv[4] = NULL;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(why, whylen, "cannot start gnuplot");
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 1, log != NULL ? log : "/dev/null",
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == ENOENT)
        return 1;
    if (rc != 0) {
        snprintf(why, whylen, "cannot start gnuplot: %s", strerror(rc));
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, whylen, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, whylen, "gnuplot failed on %s (exit %d%s%s)", script,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 log != NULL ? "; see " : "", log != NULL ? log : "");
        return -1;
    }
    return 0;
}
