// vtable_mix.cpp — an inline virtual function defined in two translation units, one compiled
// with the CoopQuantum plugin (VTABLE_SIDE=checked), one without (VTABLE_SIDE=plain). Each
// builds its object and calls the function through the vtable. The linker keeps one copy of
// each shared (linkonce) vtable: the checked side must still run its checked copy and the
// plain side its plain copy, whatever the link order (test_implicit links them one way,
// test_implicit_vtable the other).
#include <cstdint>

#if !defined(VTABLE_SIDE)
#error "define VTABLE_SIDE (checked or plain)"
#endif
#define VT_CAT2(a, b) a##_##b
#define VT_CAT(a, b) VT_CAT2(a, b)

extern "C" long coop_vtable_ext(long);  // test_implicit.cpp: opaque to both sides

struct VtShape {
    virtual ~VtShape() = default;
    virtual long area(long n) {
        unsigned long s = 0;  // unsigned: wraps, no overflow (UBSan)
        for (long i = 0; i < n; ++i) s += static_cast<unsigned long>(coop_vtable_ext(i)) ^ (s >> 3);
        return static_cast<long>(s >> 1);
    }
};

extern "C" long VT_CAT(vtable_call, VTABLE_SIDE)(long n) {
    VtShape* volatile p = new VtShape;  // volatile: no devirtualisation
    VtShape* s = p;
    const long r = s->area(n);
    delete s;
    return r;
}

// One definition per function: what a header gives both units. An inline function with a
// loop, a lambda of an inline function (its static invoker), a static local of an inline
// function, and a class whose key function is defined in the checked unit only (its vtable
// is emitted there, strong, and the plain unit's objects use it).
inline long odr_loop(long n) {
    unsigned long s = 0;
    for (long i = 0; i < n; ++i) s += static_cast<unsigned long>(coop_vtable_ext(i)) ^ (s >> 5);
    return static_cast<long>(s >> 1);
}
inline auto odr_lambda() {
    return [](long n) -> long {
        unsigned long s = 7;
        for (long i = 0; i < n; ++i) s += static_cast<unsigned long>(coop_vtable_ext(i)) ^ (s >> 7);
        return static_cast<long>(s >> 1);
    };
}
inline int& odr_counter() {
    static int c = 0;
    return c;
}
struct OdrKeyed {
    virtual void key();  // the key function: defined in the checked unit
    virtual long work(long n) {
        unsigned long s = 3;
        for (long i = 0; i < n; ++i) s += static_cast<unsigned long>(coop_vtable_ext(i)) ^ (s >> 4);
        return static_cast<long>(s >> 1);
    }
    virtual ~OdrKeyed() = default;
};
#if defined(VTABLE_SIDE_IS_CHECKED)
void OdrKeyed::key() {}
#endif

using OdrFn = long (*)(long);
extern "C" void* VT_CAT(odr_loop_addr, VTABLE_SIDE)() { return reinterpret_cast<void*>(&odr_loop); }
extern "C" void* VT_CAT(odr_lambda_addr, VTABLE_SIDE)() {
    return reinterpret_cast<void*>(static_cast<OdrFn>(odr_lambda()));
}
extern "C" int* VT_CAT(odr_counter_addr, VTABLE_SIDE)() { return &odr_counter(); }
extern "C" long VT_CAT(odr_direct_call, VTABLE_SIDE)(long n) { return odr_loop(n); }
extern "C" long VT_CAT(odr_keyed_call, VTABLE_SIDE)(long n) {
    OdrKeyed* volatile p = new OdrKeyed;  // volatile: no devirtualisation
    OdrKeyed* k = p;
    const long r = k->work(n);
    delete k;
    return r;
}
