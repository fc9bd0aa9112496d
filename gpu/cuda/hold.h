//go:build cuda

#ifndef CNNTIME_HOLD_H
#define CNNTIME_HOLD_H
int hold_load(void);
int hold_alloc(unsigned** host, unsigned long long* dev);
int hold_wait(unsigned long long dev, unsigned value);
void hold_release(unsigned* host, unsigned value);
#endif
