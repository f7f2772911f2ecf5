// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd: empties and parks physical memory regions so that the DRAM
 * behind them can power down.  Entry point: options, configuration, checks,
 * then the manager's event loop.  See regionpmd(8).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "bus.h"
#include "log.h"
#include "manager.h"
#include "offline-state.h"

#define RPM_VERSION "0.1"

/* --restore: online what a stock-backend daemon recorded, then exit. */
static int restore_blocks(void)
{
	struct offline_state *st = calloc(1, sizeof(*st));
	unsigned failed = 0;
	int r;

	if (!st)
		return 1;
	r = offline_state_load(st, "");
	if (r < 0)
		rpm_log_errno(LOG_WARNING, r, "reading %s", RPM_OFFLINE_STATE_FILE);
	if (st->n)
		log_notice("onlining %zu memory block(s) regionpmd left offline", st->n);
	r = offline_state_restore(st, "", &failed);
	if (failed)
		log_error("%u memory block(s) could not be onlined; still recorded in %s",
			  failed, RPM_OFFLINE_STATE_FILE);
	free(st);
	return failed ? 1 : 0;
}

/*
 * Exit status when the kernel has no regionpm family (built without
 * CONFIG_REGIONPM, or booted with regionpm.enable=0), or it is out of reach
 * (another network namespace): 6, which systemd shows
 * as "6/NOTCONFIGURED" (the LSB code for "program is not configured").
 * regionpmd.service has RestartPreventExitStatus=6: restarting cannot help
 * until the machine boots another kernel command line.  See regionpmd(8).
 */
#define EXIT_NO_KERNEL_SUPPORT 6

static void help(void)
{
	printf("Usage: regionpmd [OPTIONS]\n\n"
	       "Empty and park physical memory regions so their DRAM can power down.\n\n"
	       "  -c, --config FILE   configuration file (default " RPM_CONF_PATH
	       "\n"
	       "                      and the drop-ins of /etc, /run, /usr/local/lib and\n"
	       "                      /usr/lib regionpmd.conf.d/; with -c: FILE.d/ only)\n"
	       "  -n, --dry-run       decide and log, change nothing\n"
	       "  -1, --once          one decision pass, print what was done, exit\n"
	       "  -v, --verbose       debug messages\n"
	       "      --debug         debug messages and a dump of every netlink packet\n"
	       "      --bus-address ADDRESS\n"
	       "                      D-Bus to serve org.regionpm1 on instead of the system\n"
	       "                      bus (also $REGIONPM_BUS_ADDRESS)\n"
	       "      --bus-introspect\n"
	       "                      print the D-Bus introspection XML and exit\n"
	       "      --restore       online every memory block a stock-backend regionpmd\n"
	       "                      recorded in " RPM_OFFLINE_STATE_FILE " and exit\n"
	       "                      (ExecStopPost=; status 1 if one stayed offline)\n"
	       "  -h, --help          this help\n"
	       "  -V, --version       version\n\n"
	       "Signals: SIGHUP reloads the configuration (as the D-Bus method Reload does);\n"
	       "SIGTERM and SIGINT give every parked region back and exit.  Regions parked by\n"
	       "regionpmd are also given back by the kernel whenever it exits, however it exits;\n"
	       "with the stock backend (no regionpm family) by --restore or the next start.\n\n"
	       "Exit status: 0 ok, 1 failure, 2 usage, 6 the kernel has neither the regionpm\n"
	       "family nor what the stock backend needs (or not the one Backend= asks for).\n");
}

int main(int argc, char **argv)
{
	enum { OPT_DEBUG = 0x100, OPT_BUS_ADDRESS, OPT_BUS_INTROSPECT, OPT_RESTORE };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "debug", no_argument, NULL, OPT_DEBUG },
		{ "bus-address", required_argument, NULL, OPT_BUS_ADDRESS },
		{ "bus-introspect", no_argument, NULL, OPT_BUS_INTROSPECT },
		{ "restore", no_argument, NULL, OPT_RESTORE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct manager *m = NULL;
	const char *config = NULL, *bus_address = getenv("REGIONPM_BUS_ADDRESS");
	bool dry_run = false, once = false, packet_dump = false, restore = false;
	unsigned warnings = 0;
	sigset_t mask;
	char status[256];
	int c, r;

	while ((c = getopt_long(argc, argv, "c:n1vhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'n':
			dry_run = true;
			break;
		case '1':
			once = true;
			break;
		case 'v':
			rpm_log_max_level = LOG_DEBUG;
			break;
		case OPT_DEBUG:
			rpm_log_max_level = LOG_DEBUG;
			packet_dump = true;
			break;
		case OPT_BUS_ADDRESS:
			bus_address = optarg;
			break;
		case OPT_BUS_INTROSPECT:
			r = bus_introspect(stdout);
			if (r < 0) {
				rpm_log_errno(LOG_ERR, r, "introspecting the D-Bus interface");
				return 1;
			}
			return 0;
		case OPT_RESTORE:
			restore = true;
			break;
		case 'h':
			help();
			return 0;
		case 'V':
			printf("regionpmd %s\n", RPM_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'regionpmd --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "regionpmd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	if (geteuid() != 0) {
		log_error("regionpmd must run as root: the regionpm family needs "
			  "CAP_SYS_ADMIN and CAP_NET_ADMIN");
		return 1;
	}
	if (restore)
		return restore_blocks();

	/* signals are delivered through sd-event signal sources */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	r = manager_new(&m);
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "creating the event loop");
		return 1;
	}
	m->dry_run = dry_run;
	m->once = once;
	m->packet_dump = packet_dump;
	if (once)
		m->report = stdout;
	if (config) {
		m->config_path = strdup(config);
		if (asprintf(&m->dropin_dir, "%s.d", config) < 0)
			m->dropin_dir = NULL;
	}
	r = manager_load_config(m, &warnings);
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "reading the configuration %s",
			      config ? config : RPM_CONF_PATH);
		goto out;
	}
	if (warnings)
		log_warning("%u configuration line(s) ignored, see above", warnings);

	sd_notify(false, "STATUS=Opening the kernel interface");
	r = manager_start(m);
	if (r == -ENOENT || r == -EOPNOTSUPP) {
		if (r == -ENOENT && m->config.backend == RPM_BACKEND_NETLINK)
			log_error("the kernel has no regionpm netlink family (Backend=netlink): "
				  "boot a kernel with CONFIG_REGIONPM=y and without "
				  "regionpm.enable=0");
		else if (r == -ENOENT)
			log_error("the kernel has neither the regionpm netlink family nor memory "
				  "blocks and /proc/kpageflags for the stock backend "
				  "(CONFIG_MEMORY_HOTREMOVE, CONFIG_PROC_PAGE_MONITOR)");
		else
			log_error("the regionpm netlink family answers in the initial network "
				  "namespace only (no PrivateNetwork= for regionpmd)");
		bus_close(m);
		manager_free(m);
		return EXIT_NO_KERNEL_SUPPORT;
	}
	if (r == -EPERM || r == -EACCES) {
		rpm_log_errno(LOG_ERR, r, "regionpm netlink family: CAP_SYS_ADMIN and "
			      "CAP_NET_ADMIN are required");
		goto out;
	}
	if (r < 0) {
		rpm_log_errno(LOG_ERR, r, "starting");
		goto out;
	}
	if (bus_address && !*bus_address)
		bus_address = NULL;
	if (!once) {
		/* Without a system bus (a bare test VM) the daemon still works;
		 * a bus that was asked for explicitly must be there. */
		r = bus_open(m, bus_address);
		if (r < 0 && bus_address)
			goto out;
		if (r < 0)
			log_warning("running without D-Bus: regionpmctl cannot reach this daemon");
		r = 0;
	}
	log_info("regionpmd %s: %zu regions of %llu MiB, %s backend%s%s", RPM_VERSION,
		 m->n_regions, (unsigned long long)(m->info.region_size >> 20),
		 backend_name(m->backend), dry_run ? ", dry run" : "", once ? ", one pass" : "");
	manager_status(m, status, sizeof(status));
	sd_notifyf(false, "READY=1\nSTATUS=%s", status);

	r = manager_run(m);
	if (r < 0)
		rpm_log_errno(LOG_ERR, r, "event loop");
	if (once) {
		manager_status(m, status, sizeof(status));
		printf("regionpmd: one pass done: %s\n", status);
	}
out:
	bus_close(m);
	manager_free(m);
	return r < 0 ? 1 : 0;
}
