/* The baseline of the decoder benchmark: read every frame of a capture with libpcap and do nothing
 * else (touch one byte so the read is not optimised away). Prints "<frames> <seconds>". */
#include <pcap/pcap.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pcap-read-loop FILE\n");
    return 2;
  }
  char err[PCAP_ERRBUF_SIZE];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pcap_t *p = pcap_open_offline(argv[1], err);
  if (!p) {
    fprintf(stderr, "pcap-read-loop: %s: %s\n", argv[1], err);
    return 3;
  }
  struct pcap_pkthdr *h;
  const u_char *d;
  unsigned long n = 0, sum = 0;
  while (pcap_next_ex(p, &h, &d) == 1) {
    ++n;
    sum += d[h->caplen / 2];
  }
  pcap_close(p);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%lu %.6f %lu\n", n, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, sum & 1);
  return 0;
}
