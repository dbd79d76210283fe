#include "gc_log.h"

#include <czmq.h>
#include <stdarg.h>
#include <string.h>

static gc_log_level_t s_level = GC_LOG_INFO;
static char s_tag [96] = "gcnode";

int
gc_log_setup (const char *level, const char *to, gc_err_t *err)
{
    static const char *names [] = { "error", "warning", "info", "debug" };
    int found = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp (level, names [i]))
            found = i;
    if (found < 0)
        return gc_err_set (err, GC_E_CONFIG, "log level '%s': expected error, warning, info or debug", level);
    s_level = (gc_log_level_t) found;
    if (!strcmp (to, "syslog")) {
        zsys_set_logident ("gcnode");
        zsys_set_logsystem (true);
        zsys_set_logstream (NULL);
    }
    else
    if (!strcmp (to, "stderr"))
        zsys_set_logstream (stderr);
    else
        return gc_err_set (err, GC_E_CONFIG, "log destination '%s': expected stderr or syslog", to);
    return 0;
}

void
gc_log_set_tag (const char *tag)
{
    snprintf (s_tag, sizeof s_tag, "%s", tag);
}

void
gc_log (gc_log_level_t level, const char *fmt, ...)
{
    if (level > s_level)
        return;
    char line [1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (line, sizeof line, fmt, ap);
    va_end (ap);
    switch (level) {
        case GC_LOG_ERROR:   zsys_error ("%s: %s", s_tag, line); break;
        case GC_LOG_WARNING: zsys_warning ("%s: %s", s_tag, line); break;
        case GC_LOG_INFO:    zsys_info ("%s: %s", s_tag, line); break;
        case GC_LOG_DEBUG:   zsys_debug ("%s: %s", s_tag, line); break;
    }
}
