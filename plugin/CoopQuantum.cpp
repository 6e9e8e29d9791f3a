// CoopQuantum.cpp — an LLVM 14 pass plugin for clang: implicit cooperative multitasking for
// coop (Negele et al. 2017, Sect. 3.1). Use: clang++ -O2 -fpass-plugin=libCoopQuantum.so.
//
// The paper's compiler decrements the running activity's quantum by the number of
// instructions generated since the last check at every procedure entry and backward
// branch, and calls the scheduler when it runs out. This pass does the same on LLVM IR,
// after the optimisation pipeline (OptimizerLast: inlining and unrolling are done, so the
// counts are those of the code that runs and no check hinders an optimisation):
//
//   %q = load i32, @coop_quantum_left        ; initial-exec TLS (coop/include/coop/quantum.hpp)
//   %n = sub i32 %q, k
//   store i32 %n, @coop_quantum_left
//   br (%n < 0), %expired, %go               ; x86-64: subl $k, %fs:(...); js
//   expired: call void @coop_quantum_expired()   ; cold, out of line
//
// Where (after LLVM's PlaceSafepoints: function entry and loop back edges):
// - Loop latches: k = the instructions of the loop's own blocks (inner loops charge
//   themselves), the paper's "generated since the last check" count.
// - Short innermost loops (k < -coop-quantum-unroll-below, default 64 IR instructions)
//   are first unrolled, every copy keeping its exits (any trip count), towards 128
//   instructions and at most 8 times: one check then serves several iterations. A short
//   loop LLVM cannot unroll so (k < -coop-quantum-short-loop, default 16) is checked once
//   per chunk of C iterations (C = -coop-quantum-chunk / k, default 256 / k): a register
//   counter in the loop, the check charging k * C; at most C - 1 iterations per loop
//   execution go uncharged.
// - A loop whose body always calls (in a block dominating every latch) a function of this
//   module that has an entry check gets no latch check: the callee switches.
// - Function entry: only in functions that call something (recursion and calls need it);
//   k = the instructions outside loops but the cold paths' (a throw, an abort, a cleanup or
//   catch handler reached by unwinding), each of which is charged where it starts, by a
//   decrement without a branch (cold_blocks). Leaf functions without loops get no check.
// - Cycles LoopInfo does not see (irreducible control flow) get a check on each DFS back
//   edge's source block.
// What is not instrumented:
// - coop's own runtime (every function in namespace coop, C symbols coop_*, except
//   coop::internal::Closure<F>::run, which is the user's activity body), and functions
//   annotated __attribute__((annotate("coop_uncooperative"))) or named with
//   -mllvm -coop-quantum-uncooperative=name,... (mangled or as demangled "ns::f"). An
//   annotated function is also kept from being inlined (its body would otherwise be
//   checked inside its callers); the functions it calls are checked as usual (use a
//   coop::uncooperative scope for a dynamic extent).
// Linkage (split_shared): every symbol an instrumented object exports is plain, as without
// the plugin; a shared (linkonce_odr/weak_odr) function that gets checks also has an
// internal checked copy, which this object's direct calls and the vtables of the objects
// its checked code builds use. So the linker never picks an instrumented copy for code
// compiled without the plugin (the runtime, the `native` backend), and an inline function
// has one address in the program.
// No switch while the OS thread holds a lock, a static-local guard, a pthread_once or a
// stdio stream lock (hook_os_locks), nor inside a call that receives a thread-local's
// address (tls_calls); a bracketed call that may unwind gets a cleanup pad that closes the
// bracket (with_unwind_edge); thread-local addresses are recomputed at each use (OpaqueTls;
// file-local ones in -fPIC code through an accessor, local_dynamic). Signal handlers,
// followed through helpers of the module or annotated "coop_signal_handler", never switch.
// What the pass sees but cannot make right draws a warning (libc's static buffers, blocking
// waits, a thread_local only touched, a longjmp out of a bracket: "Diagnostics" below).
//
// -mllvm -coop-quantum-stats prints, per module, the checks inserted.
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/UnrollLoop.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::list<std::string> UncooperativeNames("coop-quantum-uncooperative", cl::CommaSeparated,
                                         cl::desc("functions not to instrument (mangled, or demangled ns::f)"));
cl::opt<unsigned> ShortLoop("coop-quantum-short-loop", cl::init(16),
                            cl::desc("innermost loops with fewer instructions are checked once per chunk"));
cl::opt<unsigned> ChunkCost("coop-quantum-chunk", cl::init(256),
                            cl::desc("instructions a chunked loop runs between two checks"));
cl::opt<unsigned> UnrollBelow("coop-quantum-unroll-below", cl::init(64),
                              cl::desc("innermost loops with fewer instructions are unrolled (exits kept)"));
cl::opt<unsigned> UnrollTarget("coop-quantum-unroll-target", cl::init(128),
                               cl::desc("instructions an unrolled loop body should reach"));
cl::opt<unsigned> UnrollMax("coop-quantum-unroll", cl::init(8),
                            cl::desc("short innermost loops are unrolled up to this factor (exits kept) so that one "
                                     "check serves several iterations; 1 = never"));
cl::opt<bool> Stats("coop-quantum-stats", cl::init(false), cl::desc("print the checks inserted per module"));
cl::opt<bool> UnrollOnly("coop-quantum-unroll-only", cl::init(false),
                         cl::desc("only the short-loop unrolling, no check and no other change: the baseline that "
                                  "separates the checks' cost from the unrolling's"));

constexpr const char* kUncoopAttr = "coop-uncooperative";
// kNeverSwitch — a function that must not switch, nor anything it calls in this module
// (signal handlers, the exported plain copies of checked weak_odr functions).
constexpr const char* kNeverSwitch = "coop-never-switch";
constexpr const char* kQuantum = "coop_quantum_left";
constexpr const char* kExpired = "coop_quantum_expired";
constexpr std::uint64_t kBulkBytes = 256;  // memory intrinsics shorter than this are charged as one instruction

// annotated — functions with __attribute__((annotate(`what`))): "coop_uncooperative" (no
// check in the function) or "coop_signal_handler" (a signal handler the plugin cannot see
// being installed: no check in it nor in what it calls in this module).
std::set<Function*> annotated(Module& M, StringRef what = "coop_uncooperative") {
    std::set<Function*> out;
    GlobalVariable* GA = M.getNamedGlobal("llvm.global.annotations");
    if (GA == nullptr || !GA->hasInitializer()) return out;
    auto* CA = dyn_cast<ConstantArray>(GA->getInitializer());
    if (CA == nullptr) return out;
    for (Value* Op : CA->operands()) {
        auto* CS = dyn_cast<ConstantStruct>(Op);
        if (CS == nullptr || CS->getNumOperands() < 2) continue;
        auto* F = dyn_cast<Function>(CS->getOperand(0)->stripPointerCasts());
        auto* GV = dyn_cast<GlobalVariable>(CS->getOperand(1)->stripPointerCasts());
        if (F == nullptr || GV == nullptr || !GV->hasInitializer()) continue;
        auto* S = dyn_cast<ConstantDataArray>(GV->getInitializer());
        if (S != nullptr && S->isCString() && S->getAsCString() == what) out.insert(F);
    }
    return out;
}

bool named_uncooperative(const Function& F) {
    if (UncooperativeNames.empty()) return false;
    const std::string mangled = F.getName().str();
    const std::string plain = demangle(mangled);
    for (const std::string& n : UncooperativeNames) {
        if (n == mangled || n == plain) return true;
        if (plain.size() > n.size() && plain.compare(0, n.size(), n) == 0 && plain[n.size()] == '(') return true;
    }
    return false;
}

// runtime — coop's own code: never instrumented (Sect. 3.1: the runtime is compiled
// uncooperatively). Only Closure<F>::run, the activity's body (the user's function inlined),
// is user code; the closure's other members (constructor, destructor) are coop's.
bool runtime(StringRef n) {
    if (n.startswith("coop_")) return true;
    if (!(n.startswith("_ZN4coop") || n.startswith("_ZNK4coop") || n.startswith("_ZZN4coop") ||
          n.startswith("_ZZNK4coop")))
        return false;
    return !(n.startswith("_ZN4coop8internal7ClosureI") && n.endswith("E3runEPNS0_8ActivityE"));
}

// abi_machinery — code the compiler generates for the C++ ABI, the C runtime or a
// sanitizer, not code the user wrote: thread-local wrappers and initialisers (_ZTW, _ZTH,
// __tls_init), guard variables and reference temporaries (_ZGV, _ZGR), virtual-call thunks
// (_ZTh, _ZTv, _ZTc), static initialisers and destructors (_GLOBAL__sub_I_..., 
// __cxx_global_var_init..., __cxx_global_array_dtor, __dtor_...), the ABI library
// (__cxa_*, __cxxabiv1, __clang_call_terminate) and sanitizer hooks. Such code runs where
// no switch is expected: inside a TLS access, a static initialisation holding its guard
// (which another activity would then wait on in the OS), at program start before main.
bool abi_machinery(StringRef n) {
    static const char* const kPrefixes[] = {
        "_ZTW", "_ZTH", "_ZGV", "_ZGR", "_ZTh", "_ZTv", "_ZTc", "__tls_init", "__tls_guard", "_GLOBAL__",
        "__cxx_global_var_init", "__cxx_global_array_dtor", "__dtor_", "__cxa_", "_ZN10__cxxabiv1",
        "_ZNK10__cxxabiv1", "__clang_call_terminate", "__gxx_", "__asan", "__tsan", "__ubsan", "__msan",
        "__sanitizer", "__sancov", "__llvm", "__cfi", "asan.", "tsan.", "msan.", "sancov.", "__hwasan"};
    for (const char* p : kPrefixes)
        if (n.startswith(p)) return true;
    return false;
}

// static_ctors_dtors — the functions in llvm.global_ctors / llvm.global_dtors (static
// initialisers and destructors, whatever their names).
std::set<const Function*> static_ctors_dtors(Module& M) {
    std::set<const Function*> out;
    for (const char* name : {"llvm.global_ctors", "llvm.global_dtors"}) {
        GlobalVariable* GV = M.getNamedGlobal(name);
        if (GV == nullptr || !GV->hasInitializer()) continue;
        auto* CA = dyn_cast<ConstantArray>(GV->getInitializer());
        if (CA == nullptr) continue;
        for (Value* Op : CA->operands())
            if (auto* CS = dyn_cast<ConstantStruct>(Op); CS != nullptr && CS->getNumOperands() >= 2)
                if (auto* F = dyn_cast<Function>(CS->getOperand(1)->stripPointerCasts())) out.insert(F);
    }
    return out;
}

// value_sources — the functions and the arguments of its function that `V` may be: through
// casts, selects, phis and local variables (an alloca loaded from: each value stored to it).
// Looked at before optimisation, where a parameter is first stored to its own alloca.
void value_sources(Value* V, std::set<Function*>& fns, std::set<Argument*>& args, unsigned depth = 0) {
    if (depth > 8) return;
    V = V->stripPointerCasts();
    if (auto* F = dyn_cast<Function>(V)) {
        fns.insert(F);
    } else if (auto* A = dyn_cast<Argument>(V)) {
        args.insert(A);
    } else if (auto* S = dyn_cast<SelectInst>(V)) {
        value_sources(S->getTrueValue(), fns, args, depth + 1);
        value_sources(S->getFalseValue(), fns, args, depth + 1);
    } else if (auto* P = dyn_cast<PHINode>(V)) {
        for (Value* in : P->incoming_values()) value_sources(in, fns, args, depth + 1);
    } else if (auto* L = dyn_cast<LoadInst>(V)) {
        if (auto* slot = dyn_cast<AllocaInst>(L->getPointerOperand()->stripPointerCasts()))
            for (User* U : slot->users())
                if (auto* St = dyn_cast<StoreInst>(U); St != nullptr && St->getPointerOperand()->stripPointerCasts() == slot)
                    value_sources(St->getValueOperand(), fns, args, depth + 1);
    }
}

// signal_handlers — functions installed as signal handlers: passed to signal() (or its
// variants), or stored to memory (sa_handler / sa_sigaction) by a function that calls
// sigaction(); through helpers of this module, too: a function that passes its parameter to
// signal() or stores it for sigaction() installs what its callers pass there (`void
// install(int s, void (*fn)(int)) { sa.sa_handler = fn; sigaction(s, &sa, 0); }` called as
// `install(SIGINT, on_int)`: on_int is a handler), and a function that hands a struct
// sigaction it filled to a helper calling sigaction() installs what it stored into it.
// A handler interrupts whatever ran on the thread, perhaps the runtime itself in the middle
// of a switch: it must never switch. Looked for before optimisation, where the stores and
// the calls are still in the functions that make them. What the plugin cannot see (a
// handler passed to a helper of another translation unit) is marked by the user:
// annotate("coop_signal_handler").
std::set<Function*> signal_handlers(Module& M) {
    std::set<Function*> out;
    auto is = [](const Function* f, std::initializer_list<const char*> names) {
        if (f == nullptr) return false;
        for (const char* n : names)
            if (f->getName() == n) return true;
        return false;
    };
    // The functions that call sigaction(), directly or through functions of this module.
    std::set<const Function*> installs, direct;
    for (bool grew = true; grew;) {
        grew = false;
        for (Function& F : M) {
            if (F.isDeclaration() || installs.count(&F) != 0) continue;
            bool calls = false;
            for (BasicBlock& BB : F)
                for (Instruction& I : BB)
                    if (auto* CB = dyn_cast<CallBase>(&I)) {
                        const Function* callee = CB->getCalledFunction();
                        calls = calls || is(callee, {"sigaction", "__sigaction"}) || installs.count(callee) != 0;
                    }
            if (calls) {
                installs.insert(&F);
                grew = true;
            }
        }
    }
    for (const Function* F : installs)
        for (const BasicBlock& BB : *F)
            for (const Instruction& I : BB)
                if (const auto* CB = dyn_cast<CallBase>(&I); CB != nullptr && is(CB->getCalledFunction(), {"sigaction", "__sigaction"}))
                    direct.insert(F);
    // What a function passes to a call that installs (sigaction() or a helper calling it): a
    // struct sigaction it fills and hands over. In a function that calls sigaction() itself
    // every store of a function counts (the rule of the direct case); in one that only calls
    // a helper, only the stores into what it passes to that helper (not its other callbacks).
    auto handed_over = [&](Function& F, const StoreInst* S) {
        const Value* obj = getUnderlyingObject(S->getPointerOperand());
        for (BasicBlock& BB : F)
            for (Instruction& I : BB)
                if (auto* CB = dyn_cast<CallBase>(&I); CB != nullptr && installs.count(CB->getCalledFunction()) != 0)
                    for (Value* arg : CB->args())
                        if (getUnderlyingObject(arg) == obj) return true;
        return false;
    };
    std::set<Argument*> params;  // parameters whose value is installed as a handler
    auto take = [&](Value* V) {
        std::set<Function*> fns;
        std::set<Argument*> args;
        value_sources(V, fns, args);
        out.insert(fns.begin(), fns.end());
        params.insert(args.begin(), args.end());
    };
    for (Function& F : M) {
        if (F.isDeclaration()) continue;
        for (BasicBlock& BB : F)
            for (Instruction& I : BB)
                if (auto* CB = dyn_cast<CallBase>(&I)) {
                    if (is(CB->getCalledFunction(), {"signal", "sigset", "bsd_signal", "sysv_signal", "__sysv_signal"}))
                        for (Value* arg : CB->args()) take(arg);
                } else if (auto* S = dyn_cast<StoreInst>(&I); S != nullptr && installs.count(&F) != 0) {
                    // Not a store to a local variable itself (a parameter's own alloca,
                    // followed by value_sources where it is loaded back).
                    if (auto* slot = dyn_cast<AllocaInst>(S->getPointerOperand()->stripPointerCasts());
                        slot != nullptr && !slot->getAllocatedType()->isAggregateType())
                        continue;
                    if (direct.count(&F) == 0 && !handed_over(F, S)) continue;
                    take(S->getValueOperand());
                }
    }
    // What the callers of a helper pass for an installed parameter (a helper of a helper).
    std::vector<Argument*> work(params.begin(), params.end());
    std::set<Argument*> seen(params.begin(), params.end());
    while (!work.empty()) {
        Argument* A = work.back();
        work.pop_back();
        Function* H = A->getParent();
        for (User* U : H->users()) {
            auto* CB = dyn_cast<CallBase>(U);
            if (CB == nullptr || CB->getCalledOperand()->stripPointerCasts() != H || A->getArgNo() >= CB->arg_size())
                continue;
            std::set<Function*> fns;
            std::set<Argument*> args;
            value_sources(CB->getArgOperand(A->getArgNo()), fns, args);
            out.insert(fns.begin(), fns.end());
            for (Argument* B : args)
                if (seen.insert(B).second) work.push_back(B);
        }
    }
    for (Function* h : annotated(M, "coop_signal_handler")) out.insert(h);
    return out;
}

// has_cycle — whether F's control-flow graph has a cycle (DFS colouring).
bool has_cycle(Function& F) {
    std::map<const BasicBlock*, int> colour;  // 1: on the stack, 2: done
    std::vector<std::pair<const BasicBlock*, unsigned>> stack{{&F.getEntryBlock(), 0}};
    colour[&F.getEntryBlock()] = 1;
    while (!stack.empty()) {
        auto& [BB, i] = stack.back();
        const Instruction* T = BB->getTerminator();
        if (T != nullptr && i < T->getNumSuccessors()) {
            const BasicBlock* S = T->getSuccessor(i++);
            int& c = colour[S];
            if (c == 1) return true;
            if (c == 0) {
                c = 1;
                stack.push_back({S, 0});
            }
        } else {
            colour[BB] = 2;
            stack.pop_back();
        }
    }
    return false;
}

// never_checked — functions the pass leaves alone whatever their body.
bool never_checked(const Function& F) {
    return F.isDeclaration() || F.hasAvailableExternallyLinkage() || F.hasFnAttribute(Attribute::Naked) ||
           F.hasFnAttribute(kUncoopAttr) || F.hasFnAttribute(kNeverSwitch) || named_uncooperative(F) ||
           runtime(F.getName()) ||
           abi_machinery(F.getName());
}

// Thread-locals in instrumented code (docs/implicit.md, "Thread-locals"). LLVM 14 treats a
// thread-local's address as a constant, so the optimiser may compute it (or an address
// derived from it, or __errno_location()'s result, declared const) once before a loop, and
// keep a thread-local's value in a register across the loop (load before, store after).
// Across a check that switches, the activity may resume on another worker (the address
// is then the old thread's) or another activity on the same worker may use the variable
// (its update is then lost). So before the optimiser runs, every use of a thread-local's
// address in an instruction goes through an opaque copy made right there
// (`asm sideeffect "", "=r,0"(@tls)`): it cannot be hoisted, merged with another copy or
// kept across anything, so each access computes the address of the thread it runs on, and
// no access is forwarded from or promoted across another (they are not known to be the
// same address). The asm call is marked inaccessiblememonly: it clobbers no user memory, so
// it blocks no other optimisation of the loop (it does keep the loop from being vectorised).
// coop_quantum_left is exempt: it belongs to whatever runs on the thread, by design.
constexpr const char* kTlsCopyMD = "coop.tls.copy";

bool tls_global(const Value* V) {
    const auto* GV = dyn_cast<GlobalVariable>(V);
    return GV != nullptr && GV->isThreadLocal() && GV->getName() != kQuantum;
}

bool mentions_tls(const Value* V, unsigned depth = 0) {
    if (tls_global(V)) return true;
    const auto* CE = dyn_cast<ConstantExpr>(V);
    if (CE == nullptr || depth > 8) return false;
    for (const Value* Op : CE->operands())
        if (mentions_tls(Op, depth + 1)) return true;
    return false;
}

// The local-dynamic model. In code for a shared object (-fPIC, not -fPIE) a thread-local the
// object defines for itself (internal, hidden or dso_local) is reached through the module's
// TLS block: __tls_get_addr(module) plus a constant offset. The x86-64 and AArch64 back ends
// compute that block's address once per function when it has two such accesses or more
// (X86's LDTLSCleanup, AArch64's CleanupLocalDynamicTLS: machine passes after the IR, which
// the opaque copy cannot stop), so after a check that migrated the activity every later
// access of the function went to the previous worker's variable. Such a copy is therefore a
// call of a small internal function of its own (coop_tls_addr.<name>, not inlined) holding
// the one access: each use computes the block of the thread it runs on. Its cost is a call
// per access, in such code only (executables, -fPIE, use the thread pointer directly).
constexpr const char* kTlsAccessor = "coop_tls_addr.";

bool local_dynamic(const GlobalVariable* GV) {
    const Module* M = GV->getParent();
    if (M == nullptr || M->getPICLevel() == PICLevel::NotPIC || M->getPIELevel() != PIELevel::Default) return false;
    const auto mode = GV->getThreadLocalMode();
    if (mode != GlobalValue::GeneralDynamicTLSModel && mode != GlobalValue::LocalDynamicTLSModel) return false;
    return GV->hasLocalLinkage() || GV->isDSOLocal() || GV->hasHiddenVisibility() || GV->hasProtectedVisibility();
}

CallInst* asm_copy(GlobalVariable* GV, Instruction* before, BasicBlock* at_end = nullptr) {
    LLVMContext& C = GV->getContext();
    auto* FT = FunctionType::get(GV->getType(), {GV->getType()}, false);
    InlineAsm* IA = InlineAsm::get(FT, "", "=r,0", /*hasSideEffects=*/true);
    CallInst* call = before != nullptr ? CallInst::Create(FT, IA, {GV}, GV->getName() + ".here", before)
                                       : CallInst::Create(FT, IA, {GV}, GV->getName() + ".here", at_end);
    call->addFnAttr(Attribute::NoUnwind);
    call->addFnAttr(Attribute::InaccessibleMemOnly);
    call->addFnAttr(Attribute::WillReturn);
    call->setMetadata(kTlsCopyMD, MDNode::get(C, {}));
    return call;
}

Function* tls_accessor(GlobalVariable* GV) {
    Module& M = *GV->getParent();
    const std::string name = kTlsAccessor + GV->getName().str();
    if (Function* F = M.getFunction(name)) return F;
    Function* F = Function::Create(FunctionType::get(GV->getType(), false), GlobalValue::InternalLinkage, name, M);
    for (Attribute::AttrKind k : {Attribute::NoInline, Attribute::NoUnwind, Attribute::WillReturn,
                                  Attribute::InaccessibleMemOnly})
        F->addFnAttr(k);
    BasicBlock* BB = BasicBlock::Create(M.getContext(), "", F);
    ReturnInst::Create(M.getContext(), asm_copy(GV, nullptr, BB), BB);
    return F;
}

Value* opaque_copy(Value* V, Instruction* before) {
    if (auto* GV = dyn_cast<GlobalVariable>(V); GV != nullptr && tls_global(GV)) {
        if (!local_dynamic(GV) || before->getFunction()->getName().startswith(kTlsAccessor))
            return asm_copy(GV, before);
        CallInst* call = CallInst::Create(tls_accessor(GV), {}, GV->getName() + ".here", before);
        for (Attribute::AttrKind k : {Attribute::NoUnwind, Attribute::WillReturn, Attribute::InaccessibleMemOnly})
            call->addFnAttr(k);
        call->setMetadata(kTlsCopyMD, MDNode::get(GV->getContext(), {}));
        return call;
    }
    auto* CE = dyn_cast<ConstantExpr>(V);
    if (CE == nullptr || !mentions_tls(CE)) return V;
    Instruction* I = CE->getAsInstruction();
    for (unsigned i = 0; i < I->getNumOperands(); ++i) I->setOperand(i, opaque_copy(I->getOperand(i), before));
    I->insertBefore(before);
    return I;
}

bool opaque_tls(Function& F) {
    SmallVector<std::pair<Instruction*, unsigned>, 8> uses;
    for (BasicBlock& BB : F)
        for (Instruction& I : BB) {
            if (I.getMetadata(kTlsCopyMD) != nullptr) continue;
            for (unsigned i = 0; i < I.getNumOperands(); ++i)
                if (mentions_tls(I.getOperand(i))) uses.emplace_back(&I, i);
        }
    for (auto& [I, i] : uses) {
        Instruction* at = I;
        if (auto* P = dyn_cast<PHINode>(I)) at = P->getIncomingBlock(i)->getTerminator();
        I->setOperand(i, opaque_copy(I->getOperand(i), at));
    }
    return !uses.empty();
}

// thread_identity_calls — functions whose result depends on the calling OS thread but that
// are declared const (errno's and h_errno's address, pthread_self): their calls become
// "may write inaccessible memory" so that none is hoisted or merged with another; an
// access to errno then uses the errno of the thread it runs on.
bool thread_identity_calls(Module& M) {
    bool changed = false;
    for (const char* name : {"__errno_location", "__h_errno_location", "pthread_self", "__res_state"}) {
        Function* F = M.getFunction(name);
        if (F == nullptr) continue;
        for (Attribute::AttrKind k : {Attribute::ReadNone, Attribute::ReadOnly, Attribute::Speculatable})
            F->removeFnAttr(k);
        F->addFnAttr(Attribute::InaccessibleMemOnly);
        for (User* U : F->users())
            if (auto* CB = dyn_cast<CallBase>(U); CB != nullptr && CB->getCalledOperand() == F) {
                for (Attribute::AttrKind k : {Attribute::ReadNone, Attribute::ReadOnly, Attribute::Speculatable})
                    CB->removeFnAttr(k);
                CB->addFnAttr(Attribute::InaccessibleMemOnly);
            }
        changed = true;
    }
    return changed;
}

// Thread-local objects reached through an address (`this` in `t.add(x)`, a reference, a
// pointer `p = &t` used later): the address is the thread's where it was computed, and it
// stays in a register across whatever follows, a check included; the optimiser also keeps
// the object's fields in registers across a loop, since the address does not change. Under
// OS threads the thread does not change, so this is right there; here the activity may
// resume on another worker, or another activity on the same worker may update the object
// meanwhile. Two rules keep such code as right as the same code naming the variable:
// - inside a function (and what was inlined into it), every use of an address derived
//   from a thread-local's (its opaque copy, a _ZTW wrapper's or __errno_location's result,
//   through GEPs and casts) recomputes it right there (rematerialise_tls), before the
//   optimiser can keep a field in a register across the loop: as by name, each access is
//   to the object of the thread it runs on, and a field update is one load and one store;
// - a call that receives such an address runs without a switch (bracketed like a lock,
//   tls_calls below): the callee, in any translation unit, uses its `this` on the thread it
//   was computed on. What the plugin cannot follow is an address stored in memory and
//   loaded back (a global pointer, a container of pointers): a warning names the variable
//   and the line (warn_tls_escapes).
bool tls_source(const Value* V) {
    const auto* CI = dyn_cast<CallInst>(V);
    if (CI == nullptr) return false;
    if (CI->getMetadata(kTlsCopyMD) != nullptr) return true;
    const Function* f = CI->getCalledFunction();
    if (f == nullptr) return false;
    const StringRef n = f->getName();
    return n.startswith("_ZTW") || n == "__errno_location" || n == "__h_errno_location";
}

bool tls_chain_link(const Value* V) { return isa<GetElementPtrInst>(V) || isa<BitCastInst>(V) || isa<AddrSpaceCastInst>(V); }

// tls_root — the thread-local address `V` is derived from (through GEPs and casts), or null.
Instruction* tls_root(Value* V) {
    for (unsigned depth = 0; depth < 32; ++depth) {
        if (tls_source(V)) return cast<Instruction>(V);
        if (!tls_chain_link(V)) return nullptr;
        V = cast<Instruction>(V)->getOperand(0);
    }
    return nullptr;
}

// tls_name — the thread-local a root is the address of (for diagnostics).
std::string tls_name(const Instruction* root) {
    const auto* CI = cast<CallInst>(root);
    if (CI->getMetadata(kTlsCopyMD) != nullptr) {
        if (const Function* f = CI->getCalledFunction(); f != nullptr && f->getName().startswith(kTlsAccessor))
            return demangle(f->getName().drop_front(std::strlen(kTlsAccessor)).str());
        return demangle(CI->getArgOperand(0)->getName().str());
    }
    const StringRef n = CI->getCalledFunction()->getName();
    if (n.startswith("_ZTW")) return demangle(("_Z" + n.drop_front(4)).str());
    return n == "__errno_location" ? "errno" : "h_errno";
}

// fresh — whether the address reaching `U` is computed in U's block with no call in between
// (a switch can happen only at a call or a check, and checks are added later at latches
// and entries, never inside a block).
bool fresh(Instruction* root, Instruction* U) {
    if (root->getParent() != U->getParent() || isa<PHINode>(U)) return false;
    for (Instruction* I = root->getNextNode(); I != nullptr && I != U; I = I->getNextNode())
        if (auto* CB = dyn_cast<CallBase>(I); CB != nullptr && !isa<IntrinsicInst>(CB) && !tls_source(CB) &&
                                               !(CB->isInlineAsm()))
            return false;
    return true;
}

bool rematerialise_tls(Function& F) {
    SmallVector<std::pair<Instruction*, unsigned>, 8> uses;
    for (BasicBlock& BB : F)
        for (Instruction& I : BB) {
            if (tls_chain_link(&I) || tls_source(&I)) continue;
            for (unsigned i = 0; i < I.getNumOperands(); ++i)
                if (Instruction* root = tls_root(I.getOperand(i)); root != nullptr && !fresh(root, &I))
                    uses.emplace_back(&I, i);
        }
    std::set<Instruction*> old;
    for (auto& [U, i] : uses) {
        Instruction* at = U;
        if (auto* P = dyn_cast<PHINode>(U)) at = P->getIncomingBlock(i)->getTerminator();
        SmallVector<Instruction*, 4> chain;  // from the use's operand back to the root
        for (Value* V = U->getOperand(i);; V = cast<Instruction>(V)->getOperand(0)) {
            chain.push_back(cast<Instruction>(V));
            if (tls_source(V)) break;
        }
        Value* prev = nullptr;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            Instruction* c = (*it)->clone();
            if (prev != nullptr) c->setOperand(0, prev);
            c->insertBefore(at);
            old.insert(*it);
            prev = c;
        }
        U->setOperand(i, prev);
    }
    // The old chains, now unused (from the use end back to the root).
    for (bool erased = true; erased;) {
        erased = false;
        for (auto it = old.begin(); it != old.end();)
            if ((*it)->use_empty()) {
                (*it)->eraseFromParent();
                it = old.erase(it);
                erased = true;
            } else {
                ++it;
            }
    }
    return !uses.empty();
}

// cost — the IR instructions of a block that become code (no phis, debug info, markers).
unsigned cost(const BasicBlock& BB) {
    unsigned n = 0;
    for (const Instruction& I : BB) {
        if (isa<PHINode>(I) || isa<DbgInfoIntrinsic>(I)) continue;
        if (const auto* II = dyn_cast<IntrinsicInst>(&I)) {
            if (II->isLifetimeStartOrEnd() || II->getIntrinsicID() == Intrinsic::assume) continue;
        }
        ++n;
    }
    return n;
}

// cold_blocks — the blocks outside loops that a call runs only when it does not return
// normally: those from which no `ret` can be reached (a throw, an abort, a noreturn call on
// the way) and those reached only by unwinding (dominated by a landing pad: cleanups, catch
// handlers, even one that returns). A function's entry check charges the rest; each cold
// path is charged where it starts (cold_roots), so its instructions are counted when, and
// only when, they run. Charged at the entry, every call paid for its error paths too (the
// harness's Group::spawn, whose catch formats a message: 377 units per call, 319 without
// its cold paths, for about 40 instructions run). Empty when no block returns (a function
// that never returns: everything stays at the entry).
std::set<const BasicBlock*> cold_blocks(Function& F, const LoopInfo& LI, const DominatorTree& DT) {
    std::set<const BasicBlock*> returns;
    std::vector<const BasicBlock*> work;
    for (const BasicBlock& BB : F)
        if (isa<ReturnInst>(BB.getTerminator()) && returns.insert(&BB).second) work.push_back(&BB);
    while (!work.empty()) {
        const BasicBlock* BB = work.back();
        work.pop_back();
        for (const BasicBlock* P : predecessors(BB))
            if (returns.insert(P).second) work.push_back(P);
    }
    std::set<const BasicBlock*> cold;
    if (returns.count(&F.getEntryBlock()) == 0) return cold;
    std::vector<const BasicBlock*> pads;
    for (const BasicBlock& BB : F)
        if (BB.isEHPad()) pads.push_back(&BB);
    for (const BasicBlock& BB : F) {
        if (LI.getLoopFor(&BB) != nullptr || !DT.isReachableFromEntry(&BB)) continue;
        bool c = returns.count(&BB) == 0;
        for (const BasicBlock* P : pads) c = c || DT.dominates(P, &BB);
        if (c) cold.insert(&BB);
    }
    return cold;
}

// cold_roots — charges each cold block (cold_blocks) to the block where its cold path
// starts: the nearest dominator that is cold and is entered from a block that is not (or
// is a landing pad); a cold block without such a dominator starts its own path. Returns
// the units per starting block, in the function's block order (the same IR every build).
std::vector<std::pair<BasicBlock*, unsigned>> cold_roots(Function& F, const std::set<const BasicBlock*>& cold,
                                                         const DominatorTree& DT) {
    auto starts = [&](const BasicBlock* BB) {
        if (BB->isEHPad()) return true;
        for (const BasicBlock* P : predecessors(BB))
            if (cold.count(P) == 0) return true;
        return false;
    };
    std::map<BasicBlock*, unsigned> roots;
    for (BasicBlock& BB : F) {
        if (cold.count(&BB) == 0) continue;
        BasicBlock* r = &BB;
        while (!starts(r)) {
            const DomTreeNode* up = DT.getNode(r)->getIDom();
            if (up == nullptr || cold.count(up->getBlock()) == 0) break;  // a path of its own
            r = up->getBlock();
        }
        roots[r] += cost(BB);
    }
    std::vector<std::pair<BasicBlock*, unsigned>> ordered;
    for (BasicBlock& BB : F)
        if (auto it = roots.find(&BB); it != roots.end()) ordered.emplace_back(&BB, it->second);
    return ordered;
}

// calls — whether F calls anything that is not an intrinsic or inline asm.
bool calls(const Function& F) {
    for (const BasicBlock& BB : F)
        for (const Instruction& I : BB)
            if (const auto* CB = dyn_cast<CallBase>(&I)) {
                if (CB->isInlineAsm() || tls_source(CB)) continue;  // (a thread-local's address)
                const Function* callee = CB->getCalledFunction();
                if (callee != nullptr && callee->isIntrinsic()) continue;
                return true;
            }
    return false;
}

// ---- Diagnostics: what the plugin sees but cannot make right (docs/implicit.md, "What user
// code must follow"). Each is one warning naming the line (with -g; otherwise the file) and
// the function, printed by the pass that sees the pattern.

// where — "file:line" of `I` (its debug location), or the module's source file.
std::string where(const Instruction* I) {
    const Module* M = I->getModule();
    if (const DebugLoc& DL = I->getDebugLoc()) return DL->getFilename().str() + ":" + std::to_string(DL.getLine());
    return M->getSourceFileName();
}

bool is_longjmp(const Function* f) {
    if (f == nullptr) return false;
    const StringRef n = f->getName();
    return n == "longjmp" || n == "_longjmp" || n == "siglongjmp" || n == "__longjmp_chk" || n == "__libc_longjmp";
}

// may_longjmp — whether `F` (defined in this module) calls longjmp, directly or through
// functions of this module (what other translation units do is not seen).
bool may_longjmp(const Function* F, std::map<const Function*, bool>& memo) {
    if (F == nullptr || F->isDeclaration()) return false;
    if (auto it = memo.find(F); it != memo.end()) return it->second;
    memo[F] = false;  // a cycle: decided by its other members
    bool r = false;
    for (const BasicBlock& BB : *F)
        for (const Instruction& I : BB)
            if (const auto* CB = dyn_cast<CallBase>(&I)) {
                const Function* c = CB->getCalledFunction();
                r = r || is_longjmp(c) || may_longjmp(c, memo);
            }
    return memo[F] = r;
}

// warn_longjmp_out_of_bracket — a bracketed call (`why`) whose callee may longjmp: a longjmp
// skips the frames it leaves without running anything in them (no landing pad, unlike an
// exception), so the release after the call never runs and the activity stays
// uncooperative (yield() a no-op, checks never switching) for the rest of its life. The
// plugin cannot close the bracket at the setjmp: that needs the depth at the setjmp to go
// back to (the runtime's counter has no entry point that reads or sets it), and a reset to
// zero would end an enclosing region that is really held. So the rule is the user's:
// report the error by returning or by an exception.
void warn_longjmp_out_of_bracket(CallBase* CB, const std::string& why) {
    static std::map<const Function*, bool> memo;
    const Function* callee = CB->getCalledFunction();
    if (!is_longjmp(callee) && !may_longjmp(callee, memo)) return;
    errs() << where(CB) << ": warning: coop-quantum: '" << demangle(callee->getName().str())
           << "' may longjmp out of a call that runs without a switch (" << why << ") in '"
           << demangle(CB->getFunction()->getName().str())
           << "': the no-switch region would never end and the activity would never switch again; report the "
              "error by returning or throwing instead (docs/implicit.md, longjmp)\n";
}

// blocking_wait — the OS-blocking waits of the C++ library that look lock-free: std::atomic
// and std::atomic_flag wait (C++20), and what is built on them (std::counting_semaphore,
// std::binary_semaphore, std::latch, std::barrier). libstdc++ waits in a futex, so the
// worker's OS thread sleeps; an activity that would notify it but is queued on the same
// worker never runs (with one processor: a deadlock). Returns what to call it, or "".
std::string blocking_wait(const Function* f) {
    if (f == nullptr) return "";
    const std::string d = demangle(f->getName().str());
    if (d.find("'lambda") != std::string::npos) return "";  // a lambda of such a function
    static const char* const kClasses[] = {"std::atomic<", "std::__atomic_base<", "std::__atomic_float<",
                                           "std::__atomic_ref<", "std::atomic_ref<", "std::atomic_flag::"};
    for (const char* c : kClasses)
        if (d.rfind(c, 0) == 0 && d.find("::wait(") != std::string::npos) return d.substr(0, d.find('('));
    static const char* const kFree[] = {"std::atomic_wait", "std::atomic_wait_explicit", "std::atomic_flag_wait",
                                        "std::atomic_flag_wait_explicit"};
    for (const char* c : kFree)
        if (d.rfind(std::string(c) + "<", 0) == 0 || d.rfind(std::string(c) + "(", 0) == 0) return c;
    static const char* const kBuilt[] = {"std::counting_semaphore<", "std::latch::wait(", "std::latch::arrive_and_wait(",
                                         "std::barrier<"};
    for (const char* c : kBuilt)
        if (d.rfind(c, 0) == 0 && (d.find("::acquire(") != std::string::npos || d.find("::wait(") != std::string::npos ||
                                   d.find("::try_acquire_for(") != std::string::npos ||
                                   d.find("::try_acquire_until(") != std::string::npos ||
                                   d.find("::arrive_and_wait(") != std::string::npos))
            return d.substr(0, d.find('('));
    return "";
}

// lazy_tls_touch — `_ZTW` wrapper calls whose result is not used (`(void)t;`): the
// thread_local is constructed (and its destructor registered) on the worker this runs on
// only; the activity may resume on another worker after any check, where it was never
// constructed (a "touch a flusher once per thread" idiom then loses what other workers
// accumulate). Returns the variable's name, or "".
std::string lazy_tls_touch(const CallBase* CB) {
    const Function* f = CB->getCalledFunction();
    if (f == nullptr || !f->getName().startswith("_ZTW") || !CB->use_empty()) return "";
    return demangle(("_Z" + f->getName().drop_front(4)).str());
}

// warn_at_start — the warnings decided on the code as written (before inlining): blocking
// waits and thread-locals touched only to construct them.
void warn_at_start(Function& F) {
    if (demangle(F.getName().str()).rfind("std::", 0) == 0) return;  // the library's own code
    for (BasicBlock& BB : F)
        for (Instruction& I : BB) {
            auto* CB = dyn_cast<CallBase>(&I);
            if (CB == nullptr) continue;
            if (const std::string w = blocking_wait(CB->getCalledFunction()); !w.empty())
                errs() << where(CB) << ": warning: coop-quantum: '" << w << "' in '" << demangle(F.getName().str())
                       << "' blocks the worker's OS thread (a futex): an activity queued on the same worker that "
                          "would wake it never runs; wait on a coop primitive (coop::CondVar, coop::Semaphore, a "
                          "channel) or spin on the value, which checks preempt (docs/implicit.md, blocking waits)\n";
            if (const std::string v = lazy_tls_touch(CB); !v.empty())
                errs() << where(CB) << ": warning: coop-quantum: thread_local '" << v << "' is only touched in '"
                       << demangle(F.getName().str())
                       << "': that constructs it on this worker alone, and the activity may resume on another "
                          "worker after any check, where it does not exist; touch it where it is needed, or keep "
                          "the data it flushes in it (docs/implicit.md, lazily built thread-locals)\n";
        }
}

// Functions of libc with one result buffer (or state) per process or per thread, overwritten
// by the next call on the same thread: under the plugin, the next call may be another
// activity's on the same worker, at any check between the call and the use of the result,
// and after a migration the activity reads the buffer of a thread it no longer runs on.
// `state`: the function keeps state between calls (strtok), so every call is reported.
struct StaticBuffer {
    const char* name;
    const char* instead;
    bool state;
};
const StaticBuffer kStaticBuffers[] = {
    {"inet_ntoa", "inet_ntop", false},         {"strerror", "strerror_r", false},
    {"strsignal", "sigabbrev_np or a copy", false}, {"dlerror", "a copy before any other call", false},
    {"localtime", "localtime_r", false},       {"gmtime", "gmtime_r", false},
    {"ctime", "ctime_r", false},               {"asctime", "asctime_r", false},
    {"strtok", "strtok_r", true},              {"getpwnam", "getpwnam_r", false},
    {"getpwuid", "getpwuid_r", false},         {"getgrnam", "getgrnam_r", false},
    {"getgrgid", "getgrgid_r", false},         {"gethostbyname", "getaddrinfo", false},
    {"gethostbyname2", "getaddrinfo", false},  {"gethostbyaddr", "getnameinfo", false},
    {"getservbyname", "getservbyname_r", false}, {"getservbyport", "getservbyport_r", false},
    {"getprotobyname", "getprotobyname_r", false}, {"ttyname", "ttyname_r", false},
    {"ptsname", "ptsname_r", false},           {"getlogin", "getlogin_r", false},
    {"ecvt", "ecvt_r", false},                 {"fcvt", "fcvt_r", false},
    {"l64a", "a copy", false},                 {"getmntent", "getmntent_r", false},
};

const StaticBuffer* static_buffer(const Function* f) {
    if (f == nullptr || !f->isDeclaration()) return nullptr;
    for (const StaticBuffer& b : kStaticBuffers)
        if (f->getName() == b.name) return &b;
    return nullptr;
}

// warn_static_buffers — after the checks are in: a call of kStaticBuffers whose result is
// used where a switch may have happened since (a path from the call to the use passes a
// check, a call of a checked function of this module, an indirect call or a call into coop),
// or is stored to memory (not followed). `switches(CB)`: whether a call may switch.
template <class Switches>
unsigned warn_static_buffers(Function& F, Switches switches) {
    unsigned n = 0;
    for (BasicBlock& BB0 : F)
        for (Instruction& I0 : BB0) {
            auto* call = dyn_cast<CallBase>(&I0);
            const StaticBuffer* sb = call != nullptr ? static_buffer(call->getCalledFunction()) : nullptr;
            if (sb == nullptr) continue;
            // The result and what is derived from it without a read (GEPs, casts, phis, selects).
            std::set<const Value*> derived{call};
            std::vector<const Value*> work{call};
            std::set<const Instruction*> uses;
            bool stored = false;
            while (!work.empty()) {
                const Value* V = work.back();
                work.pop_back();
                for (const User* U : V->users()) {
                    const auto* UI = dyn_cast<Instruction>(U);
                    if (UI == nullptr) continue;
                    if (isa<GetElementPtrInst>(UI) || isa<CastInst>(UI) || isa<PHINode>(UI) || isa<SelectInst>(UI)) {
                        if (derived.insert(UI).second) work.push_back(UI);
                        continue;
                    }
                    if (const auto* St = dyn_cast<StoreInst>(UI); St != nullptr && St->getValueOperand() == V)
                        stored = true;
                    uses.insert(UI);
                }
            }
            // Forward from the call: (block, a switch may have happened) states.
            bool late = stored || sb->state;
            std::set<std::pair<const BasicBlock*, bool>> seen;
            std::vector<std::tuple<const BasicBlock*, const Instruction*, bool>> todo{{&BB0, call->getNextNode(), false}};
            if (auto* II = dyn_cast<InvokeInst>(call)) todo = {{II->getNormalDest(), &II->getNormalDest()->front(), false}};
            while (!todo.empty() && !late) {
                auto [BB, from, sw] = todo.back();
                todo.pop_back();
                for (const Instruction* I = from; I != nullptr; I = I->getNextNode()) {
                    if (sw && uses.count(I) != 0) {
                        late = true;
                        break;
                    }
                    if (const auto* CB = dyn_cast<CallBase>(I); CB != nullptr && switches(CB)) sw = true;
                }
                for (const BasicBlock* S : successors(BB))
                    if (seen.insert({S, sw}).second) todo.emplace_back(S, &S->front(), sw);
            }
            if (!late) continue;
            // Once per source line and function (unrolled or cloned copies of one call).
            static std::set<std::string> said;
            if (!said.insert(where(call) + F.getName().str() + sb->name).second) continue;
            ++n;
            errs() << where(call) << ": warning: coop-quantum: '" << sb->name << "' in '"
                   << demangle(F.getName().str()) << "' "
                   << (sb->state ? "keeps its state between calls in a buffer shared by the activities of the worker"
                                 : "returns a buffer shared by the activities of the worker, and its result is used "
                                   "after a possible switch (or stored)")
                   << ": another activity's call may overwrite it meanwhile, and after a migration it is another "
                      "thread's; use "
                   << sb->instead << " (docs/implicit.md, libc's static buffers)\n";
        }
    return n;
}

unsigned tls_calls(Module& M, Function& F);

// PrepareUncooperative — at the pipeline's start: annotated and named functions and signal
// handlers get the attribute the instrumenting pass honours and are kept from being
// inlined; thread-local addresses become opaque at every use and the thread-identity
// functions lose `const` (see opaque_tls), in every function: coop's inline functions and
// the thread-local wrappers are inlined into instrumented code later.
struct PrepareUncooperative : PassInfoMixin<PrepareUncooperative> {
    PreservedAnalyses run(Module& M, ModuleAnalysisManager&) {
        if (UnrollOnly) return PreservedAnalyses::all();
        bool changed = false;
        std::set<Function*> marked = annotated(M);
        for (Function* h : signal_handlers(M)) marked.insert(h);
        for (Function& F : M)
            if (!F.isDeclaration() && named_uncooperative(F)) marked.insert(&F);
        for (Function* F : marked) {
            if (F->isDeclaration()) continue;
            F->addFnAttr(kUncoopAttr);
            F->removeFnAttr(Attribute::AlwaysInline);
            F->addFnAttr(Attribute::NoInline);
            changed = true;
        }
        for (Function* h : signal_handlers(M))
            if (!h->isDeclaration()) h->addFnAttr(kNeverSwitch);
        // coop's and the ABI's functions with a loop are not inlined into code that gets
        // checks: the loop's latch would be checked there, in the middle of the runtime's
        // operation (a CAS retry loop, a spin).
        for (Function& F : M)
            if (!F.isDeclaration() && (runtime(F.getName()) || abi_machinery(F.getName())) && has_cycle(F)) {
                F.removeFnAttr(Attribute::AlwaysInline);
                F.addFnAttr(Attribute::NoInline);
                changed = true;
            }
        changed |= thread_identity_calls(M);
        for (Function& F : M)
            if (!F.isDeclaration()) changed |= opaque_tls(F);
        for (Function& F : M)
            if (!never_checked(F) && marked.count(&F) == 0) {
                warn_at_start(F);
                changed |= tls_calls(M, F) != 0;
            }
        return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

// OpaqueTls — after each early instruction combining (before LICM and GVN): thread-local
// uses that inlining or constant folding exposed in functions that will be checked.
struct OpaqueTls : PassInfoMixin<OpaqueTls> {
    PreservedAnalyses run(Function& F, FunctionAnalysisManager&) {
        if (UnrollOnly || never_checked(F)) return PreservedAnalyses::all();
        bool changed = opaque_tls(F);
        changed |= rematerialise_tls(F);
        return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

// No-switch regions (docs/implicit.md, "No switch while the OS thread holds something"): a
// check that switches while the activity's OS thread holds something a second activity on
// the same worker could wait for in the OS (a pthread lock, a function-local static's
// guard, a pthread_once in progress, a stdio stream's lock) lets that second activity
// block the worker, and with one worker nobody ever releases it. So in checked functions:
// - each successful acquisition is followed by coop_os_lock_taken(0) and each release by
//   coop_os_lock_released(0) (quantum.cpp): while the count is positive the activity is
//   uncooperative (checks only mark the quantum as used up, yield() is a no-op); the last
//   release switches if the quantum ran out meanwhile. Lock calls pass their own result
//   (0 = taken); __cxa_guard_acquire passes "taken" when it returns nonzero (this caller
//   runs the initialiser), flockfile always;
// - calls that run user code while holding something inside a library (pthread_once, so
//   std::call_once: the callable runs under the once's in-progress state) are bracketed:
//   taken before the call, released after it on the normal and the exception path.
// The hooks are calls (a counter in the activity), not a change of the checks: the fast
// path stays two instructions, and everything the region calls, in any translation unit,
// checked or not, inherits the no-switch state (it is dynamic, like coop::uncooperative).
constexpr const char* kLockTaken = "coop_os_lock_taken";
constexpr const char* kLockReleased = "coop_os_lock_released";

cl::list<std::string> UserLocks("coop-quantum-lock", cl::CommaSeparated,
                                cl::desc("functions that acquire something a second activity could wait for in the "
                                         "OS (an int result 0 = acquired, like pthread_mutex_lock; otherwise always)"));
cl::list<std::string> UserUnlocks("coop-quantum-unlock", cl::CommaSeparated,
                                  cl::desc("functions that release what a -coop-quantum-lock function acquired"));
cl::list<std::string> UserNoSwitchCalls("coop-quantum-no-switch-call", cl::CommaSeparated,
                                        cl::desc("functions whose calls run without a switch (bracketed)"));

enum class Hook { None, TakeRc, TakeNonzero, TakeAlways, Release, Bracket };

bool named_in(const cl::list<std::string>& list, StringRef mangled) {
    if (list.empty()) return false;
    const std::string plain = demangle(mangled.str());
    for (const std::string& n : list) {
        if (n == mangled || n == plain) return true;
        if (plain.size() > n.size() && plain.compare(0, n.size(), n) == 0 && plain[n.size()] == '(') return true;
    }
    return false;
}

Hook hook_kind(const Function* f) {
    if (f == nullptr) return Hook::None;
    static const char* const kTake[] = {
        "pthread_mutex_lock",      "pthread_mutex_trylock",      "pthread_mutex_timedlock", "pthread_mutex_clocklock",
        "pthread_rwlock_rdlock",   "pthread_rwlock_wrlock",      "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
        "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_clockrdlock",
        "pthread_rwlock_clockwrlock", "pthread_spin_lock",     "pthread_spin_trylock",   "ftrylockfile"};
    static const char* const kRelease[] = {"pthread_mutex_unlock", "pthread_rwlock_unlock", "pthread_spin_unlock",
                                           "funlockfile",          "__cxa_guard_release",   "__cxa_guard_abort"};
    static const char* const kBracket[] = {"pthread_once", "__pthread_once"};
    const StringRef n = f->getName();
    for (const char* t : kTake)
        if (n == t) return Hook::TakeRc;
    if (n == "__cxa_guard_acquire") return Hook::TakeNonzero;
    if (n == "flockfile") return Hook::TakeAlways;
    for (const char* r : kRelease)
        if (n == r) return Hook::Release;
    for (const char* b : kBracket)
        if (n == b) return Hook::Bracket;
    if (named_in(UserLocks, n))
        return f->getReturnType()->isIntegerTy(32) ? Hook::TakeRc : Hook::TakeAlways;
    if (named_in(UserUnlocks, n)) return Hook::Release;
    if (named_in(UserNoSwitchCalls, n)) return Hook::Bracket;
    return Hook::None;
}

// after_call — where code that must run after `CB` returns normally goes (an invoke's normal
// edge is split so that the code runs on it alone).
Instruction* after_call(CallBase* CB) {
    if (auto* II = dyn_cast<InvokeInst>(CB)) return &*SplitEdge(II->getParent(), II->getNormalDest())->getFirstInsertionPt();
    return CB->getNextNode();
}

// after_unwind — where code that must run when invoke `II` unwinds goes (its own landing pad).
Instruction* after_unwind(InvokeInst* II) {
    BasicBlock* pad = II->getUnwindDest();
    if (pad->getSinglePredecessor() == nullptr) {
        SmallVector<BasicBlock*, 2> made;
        SplitLandingPadPredecessors(pad, {II->getParent()}, ".coop", ".coop.rest", made);
        pad = made[0];
    }
    return &*pad->getFirstInsertionPt();
}

// personality_for — the personality a function that gets its first landing pad here uses:
// the one most of the module's functions use (the inliner does not mix personalities, so a
// C++ function keeps being inlinable into C++ callers); in a module without any, C++'s when
// the module has C++ symbols, otherwise libgcc's C personality (cleanups only, which is all
// a bracket's pad needs; C++ exceptions unwind through it running the cleanup).
Constant* personality_for(Module& M) {
    std::map<Constant*, unsigned> used;
    bool cxx = false;
    for (Function& G : M) {
        if (G.hasPersonalityFn()) ++used[G.getPersonalityFn()];
        cxx = cxx || G.getName().startswith("_Z");
    }
    Constant* best = nullptr;
    unsigned n = 0;
    for (auto& [P, k] : used)
        if (k > n) best = P, n = k;
    if (best != nullptr) return best;
    LLVMContext& C = M.getContext();
    return cast<Constant>(
        M.getOrInsertFunction(cxx ? "__gxx_personality_v0" : "__gcc_personality_v0",
                              FunctionType::get(Type::getInt32Ty(C), true))
            .getCallee());
}

// with_unwind_edge — a bracketed call must close its bracket however it leaves. A `call`
// that may unwind (an exception thrown by the callee, or by what it calls, in a function
// that has no cleanup around the call) has no unwind edge of its own: the exception passes
// through this frame and the release after the call never runs, leaving the activity
// uncooperative for good (a yield-based wait then never lets the other activity run: a
// deadlock at P=1). So such a call becomes an `invoke` whose unwind edge goes to a landing
// pad of its own, `cleanup` then `resume` (the exception continues as before; the caller
// adds the release after the landingpad, through after_unwind). Not changed: calls that
// cannot unwind (nounwind callee or call site, or a nounwind caller: an exception cannot
// leave it) and musttail calls (nothing may follow them but the return). Returns the call
// as it now is.
CallBase* with_unwind_edge(Module& M, CallBase* CB) {
    auto* CI = dyn_cast<CallInst>(CB);
    if (CI == nullptr || CI->doesNotThrow() || CI->isMustTailCall()) return CB;
    Function& F = *CI->getFunction();
    if (F.doesNotThrow()) return CB;
    if (!F.hasPersonalityFn()) F.setPersonalityFn(personality_for(M));
    LLVMContext& C = M.getContext();
    BasicBlock* pad = BasicBlock::Create(C, "coop.bracket.unwind", &F);
    LandingPadInst* lp =
        LandingPadInst::Create(StructType::get(Type::getInt8PtrTy(C), Type::getInt32Ty(C)), 0, "coop.lp", pad);
    lp->setCleanup(true);
    lp->setDebugLoc(CI->getDebugLoc());
    ResumeInst::Create(lp, pad);
    BasicBlock* BB = CI->getParent();
    changeToInvokeAndSplitBasicBlock(CI, pad);
    return cast<InvokeInst>(BB->getTerminator());
}

unsigned hook_os_locks(Module& M, Function& F) {
    SmallVector<std::pair<CallBase*, Hook>, 4> found;
    for (BasicBlock& BB : F)
        for (Instruction& I : BB)
            if (auto* CB = dyn_cast<CallBase>(&I))
                if (Hook k = hook_kind(CB->getCalledFunction()); k != Hook::None) {
                    if (k == Hook::TakeRc && !CB->getType()->isIntegerTy(32)) continue;
                    if (k == Hook::TakeNonzero && !CB->getType()->isIntegerTy()) continue;
                    found.emplace_back(CB, k);
                }
    LLVMContext& C = M.getContext();
    Type* I32 = Type::getInt32Ty(C);
    auto* FT = FunctionType::get(Type::getVoidTy(C), {I32}, false);
    auto hook = [&](const char* name) {
        FunctionCallee h = M.getOrInsertFunction(name, FT);
        if (auto* HF = dyn_cast<Function>(h.getCallee())) HF->addFnAttr(Attribute::NoUnwind);
        return h;
    };
    Constant* zero = ConstantInt::get(I32, 0);
    for (auto& [CB, k] : found) {
        const DebugLoc loc = CB->getDebugLoc();
        auto emit = [&](const char* name, Value* rc, Instruction* before) {
            CallInst* call = CallInst::Create(hook(name), {rc}, "", before);
            call->setDebugLoc(loc);
        };
        switch (k) {
            case Hook::TakeRc:
            case Hook::TakeNonzero: {
                Instruction* at = after_call(CB);
                Value* rc = CB;
                if (k == Hook::TakeNonzero) {  // nonzero: this caller holds the guard (rc 0)
                    IRBuilder<> B(at);
                    rc = B.CreateZExt(B.CreateICmpEQ(CB, ConstantInt::get(CB->getType(), 0)), I32);
                }
                emit(kLockTaken, rc, at);
                break;
            }
            case Hook::TakeAlways: emit(kLockTaken, zero, after_call(CB)); break;
            case Hook::Release:  // an unlock's own result when it has one (0 = released)
                emit(kLockReleased, CB->getType()->isIntegerTy(32) ? static_cast<Value*>(CB) : zero, after_call(CB));
                break;
            case Hook::Bracket:
                if (auto* once = dyn_cast<Function>(CB->getArgOperand(CB->arg_size() - 1)->stripPointerCasts()))
                    if (std::map<const Function*, bool> memo; may_longjmp(once, memo))
                        errs() << where(CB) << ": warning: coop-quantum: '" << demangle(once->getName().str())
                               << "', run inside '" << CB->getCalledFunction()->getName()
                               << "' without a switch, may longjmp out of it: the no-switch region would never "
                                  "end (docs/implicit.md, longjmp)\n";
                CB = with_unwind_edge(M, CB);
                emit(kLockTaken, zero, CB);
                if (auto* II = dyn_cast<InvokeInst>(CB)) emit(kLockReleased, zero, after_unwind(II));
                emit(kLockReleased, zero, after_call(CB));
                break;
            case Hook::None: break;
        }
    }
    return found.size();
}

// tls_calls — calls in `F` that receive a thread-local's address (`this` of a thread_local
// object, a reference to one) are bracketed: no switch inside them (see tls_source). Done
// at the pipeline's start, before inlining: the callee's body is optimised on its
// own first (its loop may keep `this->field` in a register) and then inlined, so the
// bracket must be in place around the call before that; the inlined body then stays
// between the two hooks (opaque calls that memory accesses do not cross). Not bracketed:
// callees defined here without a loop or a call (no check can be inside them), calls into
// coop's runtime (they never check; a coop primitive may park) and the lock functions. At
// the end the calls that still receive such an address and were not bracketed
// yet (made so by the optimiser) are.
constexpr const char* kTlsBracketMD = "coop.tls.bracketed";

unsigned tls_calls(Module& M, Function& F) {
    SmallVector<CallBase*, 4> found;
    for (BasicBlock& BB : F)
        for (Instruction& I : BB) {
            auto* CB = dyn_cast<CallBase>(&I);
            if (CB == nullptr || isa<IntrinsicInst>(CB) || CB->isInlineAsm() || tls_source(CB) ||
                CB->getMetadata(kTlsBracketMD) != nullptr)
                continue;
            Function* f = CB->getCalledFunction();
            if (f != nullptr && (runtime(f->getName()) || hook_kind(f) != Hook::None ||
                                 f->getName() == kLockTaken || f->getName() == kLockReleased))
                continue;
            if (f != nullptr && !f->isDeclaration() && !calls(*f) && !has_cycle(*f)) continue;
            for (Value* arg : CB->args())
                if (tls_root(arg) != nullptr) {
                    found.push_back(CB);
                    break;
                }
        }
    LLVMContext& C = M.getContext();
    Type* I32 = Type::getInt32Ty(C);
    auto* FT = FunctionType::get(Type::getVoidTy(C), {I32}, false);
    Constant* zero = ConstantInt::get(I32, 0);
    for (CallBase* CB : found) {
        for (Value* arg : CB->args())
            if (Instruction* root = tls_root(arg)) {
                warn_longjmp_out_of_bracket(CB, "given thread_local '" + tls_name(root) + "''s address");
                break;
            }
        CB = with_unwind_edge(M, CB);
        auto emit = [&](const char* name, Instruction* before) {
            FunctionCallee h = M.getOrInsertFunction(name, FT);
            if (auto* HF = dyn_cast<Function>(h.getCallee())) HF->addFnAttr(Attribute::NoUnwind);
            CallInst::Create(h, {zero}, "", before)->setDebugLoc(CB->getDebugLoc());
        };
        CB->setMetadata(kTlsBracketMD, MDNode::get(C, {}));
        emit(kLockTaken, CB);
        if (auto* II = dyn_cast<InvokeInst>(CB)) emit(kLockReleased, after_unwind(II));
        emit(kLockReleased, after_call(CB));
    }
    return found.size();
}

// warn_tls_escapes — a thread-local's address stored to memory (not a local variable) in
// checked code: whoever loads it back may use it on another worker after a switch, and the
// plugin cannot follow it. One warning per store, naming the variable and the line.
unsigned warn_tls_escapes(Function& F) {
    unsigned n = 0;
    for (BasicBlock& BB : F)
        for (Instruction& I : BB) {
            auto* S = dyn_cast<StoreInst>(&I);
            if (S == nullptr || isa<AllocaInst>(getUnderlyingObject(S->getPointerOperand()))) continue;
            Instruction* root = tls_root(S->getValueOperand());
            if (root == nullptr) continue;
            ++n;
            std::string where = F.getParent()->getSourceFileName();
            if (const DebugLoc& DL = S->getDebugLoc()) where = DL->getFilename().str() + ":" + std::to_string(DL.getLine());
            errs() << where << ": warning: coop-quantum: the address of thread_local '" << tls_name(root)
                   << "' is stored to memory in '" << demangle(F.getName().str())
                   << "': code that loads it back may use it after a switch on another worker "
                      "(docs/implicit.md, thread-locals)\n";
        }
    return n;
}

// localise — `G` becomes this object file's own definition.
void localise(GlobalValue& G) {
    G.setLinkage(GlobalValue::InternalLinkage);
    G.setVisibility(GlobalValue::DefaultVisibility);
    G.setDLLStorageClass(GlobalValue::DefaultStorageClass);
    if (auto* GO = dyn_cast<GlobalObject>(&G)) GO->setComdat(nullptr);
}

// plain_callees — what a function that must not switch calls in this module must not switch
// either (coop's inline functions call std:: templates, which at -O0 stay calls): each call
// from `work` (transitively) to a function that would get checks goes to a plain internal
// clone of it (one per function, named <name>.coop.plain). Returns the clones made.
template <class Skip>
unsigned plain_callees(std::vector<Function*> work, std::map<Function*, Function*>& clones, Skip skip) {
    unsigned n = 0;
    std::set<Function*> done;
    while (!work.empty()) {
        Function* R = work.back();
        work.pop_back();
        if (!done.insert(R).second) continue;
        for (BasicBlock& BB : *R)
            for (Instruction& I : BB) {
                auto* CB = dyn_cast<CallBase>(&I);
                Function* G = CB != nullptr ? CB->getCalledFunction() : nullptr;
                if (G == nullptr || G->isDeclaration()) continue;
                if (skip(*G)) {
                    work.push_back(G);  // skipped itself, but its callees are reached from R
                    continue;
                }
                Function*& P = clones[G];
                if (P == nullptr) {
                    ValueToValueMapTy VM;
                    P = CloneFunction(G, VM);
                    P->setName(G->getName() + ".coop.plain");
                    localise(*P);
                    P->addFnAttr(kNeverSwitch);
                    ++n;
                    work.push_back(P);
                }
                CB->setCalledFunction(P);
            }
    }
    return n;
}

struct Site {
    Site(Instruction* b, unsigned cost) : before(b), k(cost) {}
    Site(BasicBlock* h, unsigned cost, unsigned c) : k(cost), chunk(c), header(h) {}
    Instruction* before = nullptr;  // insert the check before this instruction
    unsigned k;                     // quantum units it charges
    unsigned chunk = 0;             // > 0: a chunked loop (header, latches below)
    bool branch = true;             // false: charge only (a checked callee switches)
    Value* bytes = nullptr;         // a memory intrinsic's length: also charges bytes / 16
    BasicBlock* header = nullptr;
    SmallVector<BasicBlock*, 2> latches;
};

// refers — whether constant `C` mentions a global of `set` (through casts, GEPs, arrays,
// structs: a vtable's slots).
bool refers(const Constant* C, const std::set<const GlobalValue*>& set, std::set<const Constant*>& seen) {
    if (const auto* G = dyn_cast<GlobalValue>(C)) return set.count(G) != 0;
    if (!seen.insert(C).second) return false;
    for (const Value* Op : C->operands())
        if (const auto* OC = dyn_cast<Constant>(Op); OC != nullptr && refers(OC, set, seen)) return true;
    return false;
}

bool body_refers(const Function& F, const std::set<const GlobalValue*>& set) {
    std::set<const Constant*> seen;
    for (const BasicBlock& BB : F)
        for (const Instruction& I : BB)
            for (const Value* Op : I.operands())
                if (const auto* C = dyn_cast<Constant>(Op); C != nullptr && refers(C, set, seen)) return true;
    return false;
}

bool is_vtable(const GlobalVariable& V) {
    const StringRef n = V.getName();
    return n.startswith("_ZTV") || n.startswith("_ZTT") || n.startswith("_ZTC");
}

// split_shared — one definition per function (docs/implicit.md, "Shared definitions"). The
// linker keeps one copy of each shared (linkonce/weak) symbol, from whichever object comes
// first, and C++ requires an inline function to have one address in the program; so every
// symbol this object exports must be what a translation unit compiled without the plugin
// exports, and checked code stays internal:
// - a shared function that gets checks is split: its symbol (same name, linkage, comdat)
//   is a plain copy (no check, and what it calls in this module does not switch either),
//   and an internal `<name>.coop.checked` copy gets the checks;
// - in this module, direct calls go to the checked copy (also through an alias: C1
//   constructors alias C2); every other use (the function's address, an alias, a slot of a
//   vtable the linker may choose) is the plain symbol: `&f` is the same in every object;
// - a vtable (any linkage: a strong one, emitted with its class's key function, too) with
//   a slot for a split function keeps its plain slots and gets an internal checked clone
//   `<name>.coop.checked`, which the checked code of this module stores into the objects it
//   builds (a shared constructor that stores a vtable is split for that, even without
//   checks of its own; VTTs follow their vtables). Objects built by checked code run the
//   checked copies of their class's inline virtual functions; objects built elsewhere (a
//   plain object, another checked object, the runtime) run their own or the plain ones.
// - type information (_ZTI, _ZTS) and static locals are not copied: they stay shared.
// - an activity's body (Closure<F>::run) is the exception: see below.
// Returns the plain copies (checked copy -> plain copy); `n_split` counts the functions
// split and the vtables cloned.
template <class Checked>
std::map<Function*, Function*> split_shared(Module& M, const std::map<Function*, std::vector<Site>>& sites,
                                            Checked checked_world, unsigned& n_split) {
    // ODR linkages only: a plain `weak` or `linkonce` definition may be replaced by another
    // object's at link time, which this module's calls must then reach: not split.
    auto shared = [](const GlobalValue& G) { return G.hasLinkOnceODRLinkage() || G.hasWeakODRLinkage(); };
    // An activity's body (coop::internal::Closure<F>::run, a template instance) is reached
    // only through the address coop's spawn stores in the activity, never by name from user
    // code: it is not split but made internal (checked), and so is what refers to it (the
    // spawn<F> instance storing its address), as everything checked used to be: otherwise the
    // runtime would store the plain symbol and no activity body would be checked.
    auto activity_body = [](const Function& F) {
        return F.getName().startswith("_ZN4coop8internal7ClosureI") && F.getName().endswith("E3runEPNS0_8ActivityE");
    };
    std::set<const GlobalValue*> bodies;
    for (auto& [F, list] : sites)
        if (!list.empty() && shared(*F) && activity_body(*F)) {
            localise(*F);
            bodies.insert(F);
            ++n_split;
        }
    for (bool grew = !bodies.empty(); grew;) {
        grew = false;
        for (Function& G : M)
            if (!G.isDeclaration() && (G.hasLinkOnceLinkage() || G.hasWeakLinkage()) && bodies.count(&G) == 0 &&
                body_refers(G, bodies)) {
                localise(G);
                bodies.insert(&G);
                ++n_split;
                grew = true;
            }
    }
    std::set<Function*> S;
    for (auto& [F, list] : sites)
        if (!list.empty() && shared(*F) && bodies.count(F) == 0) S.insert(F);
    std::map<GlobalVariable*, GlobalVariable*> vt;  // vtable -> its checked clone
    for (bool grew = true; grew;) {
        grew = false;
        std::set<const GlobalValue*> refs(S.begin(), S.end());
        for (auto& [V, c] : vt) refs.insert(V);
        std::set<const Constant*> seen;
        for (GlobalVariable& V : M.globals())
            if (is_vtable(V) && V.hasInitializer() && vt.count(&V) == 0 && refers(V.getInitializer(), refs, seen)) {
                vt[&V] = nullptr;
                grew = true;
            }
        std::set<const GlobalValue*> vts;
        for (auto& [V, c] : vt) vts.insert(V);
        for (auto& [F, list] : sites)
            if (shared(*F) && S.count(F) == 0 && body_refers(*F, vts)) {
                S.insert(F);
                grew = true;
            }
    }
    std::map<Function*, Function*> plain_of;
    ValueToValueMapTy to_plain;  // checked copy -> plain symbol (every use in plain code, addresses)
    for (Function* F : S) {
        ValueToValueMapTy VM;
        Function* plain = CloneFunction(F, VM);
        const std::string name = F->getName().str();
        F->setName(name + ".coop.checked");
        plain->setName(name);
        plain->setLinkage(F->getLinkage());
        plain->setVisibility(F->getVisibility());
        plain->setUnnamedAddr(F->getUnnamedAddr());
        plain->setComdat(F->getComdat());
        plain->addFnAttr(kNeverSwitch);
        localise(*F);
        plain_of[F] = plain;
        to_plain[F] = plain;
        ++n_split;
    }
    ValueToValueMapTy to_checked_vt;  // vtable -> checked clone (checked code)
    for (auto& [V, c] : vt) {
        c = new GlobalVariable(M, V->getValueType(), V->isConstant(), GlobalValue::InternalLinkage, nullptr,
                               V->getName() + ".coop.checked", V, V->getThreadLocalMode());
        c->setAlignment(V->getAlign());
        c->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
        to_checked_vt[V] = c;
        ++n_split;
    }
    // Initialisers: the clone's slots are the checked copies (and nested vtables' clones);
    // the original's the plain symbols.
    for (auto& [V, c] : vt) {
        Constant* init = V->getInitializer();
        c->setInitializer(MapValue(init, to_checked_vt, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges));
        V->setInitializer(MapValue(init, to_plain, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges));
    }
    // Aliases of a split function (C1 -> C2): the alias is the plain symbol; direct calls
    // through it in checked code go to the checked copy.
    ValueToValueMapTy callee_map;  // alias -> checked copy
    for (GlobalAlias& A : M.aliases()) {
        auto* target = dyn_cast<Function>(A.getAliasee()->stripPointerCasts());
        auto it = target != nullptr ? plain_of.find(target) : plain_of.end();
        if (it == plain_of.end()) continue;
        callee_map[&A] = ConstantExpr::getBitCast(target, A.getType());
        A.setAliasee(ConstantExpr::getBitCast(it->second, A.getType()));
    }
    for (auto& [V, c] : vt) callee_map[V] = c;
    ValueToValueMapTy addr_map;  // other operands of checked code: vtable clones, plain addresses
    for (auto& [V, c] : vt) addr_map[V] = c;
    for (auto& [F, plain] : plain_of) addr_map[F] = plain;
    // (RF_NoModuleLevelChanges: globals are still mapped through the maps; it keeps the
    // mapper from cloning distinct debug-info nodes of the instructions' !dbg.)
    // Everything outside checked code is the plain world: the plain copies (cloned from the
    // checked copies' bodies, which name split functions by their checked copy), the code
    // that must not switch (static initialisers storing `&f`, the runtime), and the
    // initialisers of other globals (`Fn g = &f;`).
    for (Function& G : M)
        if (!G.isDeclaration() && !checked_world(G))
            for (BasicBlock& BB : G)
                for (Instruction& I : BB) RemapInstruction(&I, to_plain, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
    for (GlobalVariable& V : M.globals())
        if (V.hasInitializer() && vt.count(&V) == 0 && V.getName() != "llvm.global.annotations" &&
            !V.getName().endswith(".coop.checked"))
            V.setInitializer(MapValue(V.getInitializer(), to_plain, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges));
    for (Function& G : M) {
        if (G.isDeclaration() || !checked_world(G)) continue;
        for (BasicBlock& BB : G)
            for (Instruction& I : BB)
                for (Use& U : I.operands()) {
                    auto* Cst = dyn_cast<Constant>(U.get());
                    if (Cst == nullptr) continue;
                    auto* CB = dyn_cast<CallBase>(&I);
                    const bool callee = CB != nullptr && CB->isCallee(&U);
                    Value* mapped = MapValue(Cst, callee ? callee_map : addr_map, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
                    if (mapped != nullptr && mapped != Cst) U.set(mapped);
                }
    }
    return plain_of;
}


struct CoopQuantum : PassInfoMixin<CoopQuantum> {
    PreservedAnalyses run(Module& M, ModuleAnalysisManager& MAM) {
        FunctionAnalysisManager& FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
        const std::set<Function*> marked = annotated(M);
        const std::set<const Function*> ctors = static_ctors_dtors(M);
        auto skip = [&](Function& F) { return never_checked(F) || marked.count(&F) != 0 || ctors.count(&F) != 0; };
        // What coop's code, the ABI's code, static initialisers and signal handlers call
        // gets no checks either (plain clones).
        std::map<Function*, Function*> clones;
        std::vector<Function*> roots;
        for (Function& F : M)
            if (!F.isDeclaration() && (runtime(F.getName()) || abi_machinery(F.getName()) || ctors.count(&F) != 0 ||
                                       F.hasFnAttribute(kNeverSwitch)))
                roots.push_back(&F);
        const unsigned n_plain = UnrollOnly ? 0 : plain_callees(roots, clones, skip);
        unsigned n_lock_hooks = 0;
        unsigned n_tls_calls = 0;
        for (Function& F : M)
            if (!UnrollOnly && !skip(F)) {
                n_lock_hooks += hook_os_locks(M, F);
                n_tls_calls += tls_calls(M, F);
                warn_tls_escapes(F);
            }
        // Phase 0: short innermost loops (< -coop-quantum-unroll-below IR instructions) are
        // unrolled (every copy keeps its exits, so any trip count is fine) towards
        // -coop-quantum-unroll-target instructions, at most -coop-quantum-unroll times, so
        // that one latch check serves several iterations: a check costs two machine
        // instructions, a fifth of a ten-instruction loop, a fortieth of it unrolled eight
        // times. Loops that cannot be unrolled so and stay below -coop-quantum-short-loop
        // are chunked below instead.
        unsigned n_unrolled = 0;
        if (UnrollMax > 1)
            for (Function& F : M) {
                if (skip(F)) continue;
                LoopInfo& LI = FAM.getResult<LoopAnalysis>(F);
                SmallVector<Loop*, 8> shorts;
                for (Loop* L : LI.getLoopsInPreorder()) {
                    if (!L->isInnermost()) continue;
                    unsigned k = 0;
                    for (BasicBlock* BB : L->blocks()) k += cost(*BB);
                    // Not loops the source or an earlier pass said not to unroll
                    // (#pragma clang loop unroll(disable), a vectoriser's remainder loop),
                    // nor loops of optnone functions.
                    if (k < UnrollBelow && L->getLoopLatch() && L->isSafeToClone() && !F.hasOptNone() &&
                        !getBooleanLoopAttribute(L, "llvm.loop.unroll.disable") &&
                        !getBooleanLoopAttribute(L, "llvm.loop.unroll.runtime.disable"))
                        shorts.push_back(L);
                }
                if (shorts.empty()) continue;
                DominatorTree& DT = FAM.getResult<DominatorTreeAnalysis>(F);
                ScalarEvolution& SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
                AssumptionCache& AC = FAM.getResult<AssumptionAnalysis>(F);
                TargetTransformInfo& TTI = FAM.getResult<TargetIRAnalysis>(F);
                OptimizationRemarkEmitter ORE(&F);
                bool changed = false;
                for (Loop* L : shorts) {
                    unsigned k = 0;
                    for (BasicBlock* BB : L->blocks()) k += cost(*BB);
                    const unsigned k1 = std::max(k, 1u);
                    const unsigned count = std::min<unsigned>(UnrollMax, std::max(2u, (UnrollTarget + k1 - 1) / k1));
                    changed |= simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
                    changed |= formLCSSARecursively(*L, DT, &LI, &SE);
                    // A computable trip count: runtime unrolling (one exit test per unrolled
                    // body, the remainder unrolled completely in front); otherwise every copy
                    // keeps its exit test (Force falls back to that, too).
                    const bool counted = !isa<SCEVCouldNotCompute>(SE.getBackedgeTakenCount(L));
                    UnrollLoopOptions ULO{count, /*Force=*/true, /*Runtime=*/counted, /*AllowExpensiveTripCount=*/false,
                                          /*UnrollRemainder=*/true, /*ForgetAllSCEV=*/false};
                    if (UnrollLoop(L, ULO, &LI, &SE, &DT, &AC, &TTI, &ORE, /*PreserveLCSSA=*/true) !=
                        LoopUnrollResult::Unmodified) {
                        ++n_unrolled;
                        changed = true;
                    }
                }
                if (changed) FAM.invalidate(F, PreservedAnalyses::none());
            }

        if (UnrollOnly) return n_unrolled > 0 ? PreservedAnalyses::none() : PreservedAnalyses::all();

        // Phase 1: which functions get an entry check (the loop rule below needs it).
        std::set<const Function*> entry_checked;
        for (Function& F : M)
            if (!skip(F) && calls(F)) entry_checked.insert(&F);

        // Phase 2: the sites of every function (decided before any CFG change).
        std::map<Function*, std::vector<Site>> sites;
        unsigned n_entry = 0, n_latch = 0, n_chunked = 0, n_skipped_calls = 0, n_irreducible = 0, n_bulk = 0,
                 n_cold = 0;
        for (Function& F : M) {
            if (skip(F)) continue;
            LoopInfo& LI = FAM.getResult<LoopAnalysis>(F);
            DominatorTree& DT = FAM.getResult<DominatorTreeAnalysis>(F);
            std::vector<Site>& out = sites[&F];
            if (entry_checked.count(&F) != 0) {
                // The instructions outside loops, but the cold paths' (cold_blocks), which
                // charge themselves where they start: a decrement without a branch (no new
                // switch point on an unwinding path; the next check sees the charge).
                const std::set<const BasicBlock*> cold = cold_blocks(F, LI, DT);
                unsigned k = 0;
                for (BasicBlock& BB : F)
                    if (LI.getLoopFor(&BB) == nullptr && cold.count(&BB) == 0) k += cost(BB);
                for (auto [start, units] : cold_roots(F, cold, DT)) {
                    BasicBlock::iterator at = start->getFirstInsertionPt();
                    if (at == start->end() || units == 0) {  // a catchswitch: no place to charge
                        k += units;
                        continue;
                    }
                    out.emplace_back(&*at, units);
                    out.back().branch = false;
                    ++n_cold;
                }
                BasicBlock& E = F.getEntryBlock();
                BasicBlock::iterator it = E.getFirstInsertionPt();
                while (isa<AllocaInst>(*it)) ++it;
                out.emplace_back(&*it, k == 0 ? 1u : k);
                ++n_entry;
            }
            for (Loop* L : LI.getLoopsInPreorder()) {
                unsigned k = 0;
                for (BasicBlock* BB : L->blocks())
                    if (LI.getLoopFor(BB) == L) k += cost(*BB);
                if (k == 0) k = 1;
                SmallVector<BasicBlock*, 4> latches;
                L->getLoopLatches(latches);
                if (latches.empty()) continue;
                // A call to a checked function in a block every iteration passes through.
                bool call_checked = false;
                for (BasicBlock* BB : L->blocks()) {
                    bool dominates_all = true;
                    for (BasicBlock* Lt : latches) dominates_all = dominates_all && DT.dominates(BB, Lt);
                    if (!dominates_all) continue;
                    for (Instruction& I : *BB)
                        if (auto* CB = dyn_cast<CallBase>(&I))
                            if (const Function* c = CB->getCalledFunction(); c && entry_checked.count(c))
                                call_checked = true;
                }
                if (call_checked) {
                    // The callee's entry check switches, but it charges only its own
                    // instructions: the loop's own are charged here, without a branch.
                    for (BasicBlock* Lt : latches) {
                        out.emplace_back(Lt->getTerminator(), k);
                        out.back().branch = false;
                    }
                    ++n_skipped_calls;
                    continue;
                }
                if (L->isInnermost() && k < ShortLoop && !isa<IndirectBrInst>(L->getHeader()->getTerminator()) &&
                    ChunkCost > k) {
                    Site s(L->getHeader(), k, ChunkCost / k);
                    s.latches.append(latches.begin(), latches.end());
                    out.push_back(s);
                    ++n_chunked;
                    continue;
                }
                for (BasicBlock* Lt : latches) {
                    out.emplace_back(Lt->getTerminator(), k);
                    ++n_latch;
                }
            }
            // Memory intrinsics (memset, memcpy, memmove: often a loop the optimiser turned
            // into one call) of a length unknown or >= kBulkBytes: a check after the call
            // charging 1 + length / 16 units (about what a vectorised loop over those bytes
            // costs in instructions), so that a loop that became a memset is still charged.
            for (BasicBlock& BB : F)
                for (Instruction& I : BB)
                    if (auto* MI = dyn_cast<MemIntrinsic>(&I)) {
                        auto* len = dyn_cast<ConstantInt>(MI->getLength());
                        if (len != nullptr && len->getZExtValue() < kBulkBytes) continue;
                        out.emplace_back(MI->getNextNode(), 1u);
                        out.back().bytes = MI->getLength();
                        ++n_bulk;
                    }
            // Cycles without a natural loop (irreducible): a check at each DFS back edge
            // that is not a natural loop's own back edge (its source inside a loop headed
            // by its target: that latch is checked above). A loop header can also be the
            // target of an irreducible back edge from outside its loop (entry -> {H, A},
            // A -> H, H -> {L, A}, L -> H: the cycle H -> A -> H never passes L).
            std::set<BasicBlock*> on_stack, done;
            std::vector<std::pair<BasicBlock*, unsigned>> stack{{&F.getEntryBlock(), 0}};
            on_stack.insert(&F.getEntryBlock());
            while (!stack.empty()) {
                auto& [BB, i] = stack.back();
                Instruction* T = BB->getTerminator();
                if (T != nullptr && i < T->getNumSuccessors()) {
                    BasicBlock* S = T->getSuccessor(i++);
                    if (on_stack.count(S) != 0) {
                        const Loop* HL = LI.isLoopHeader(S) ? LI.getLoopFor(S) : nullptr;
                        if (HL == nullptr || !HL->contains(BB)) {
                            out.emplace_back(T, cost(*BB) == 0 ? 1u : cost(*BB));
                            ++n_irreducible;
                        }
                    } else if (done.count(S) == 0) {
                        on_stack.insert(S);
                        stack.push_back({S, 0});
                    }
                } else {
                    on_stack.erase(BB);
                    done.insert(BB);
                    stack.pop_back();
                }
            }
        }

        // Phase 3a: one definition per function (split_shared): what this object exports is
        // plain, the checked copies are internal.
        unsigned n_local = 0;
        const std::map<Function*, Function*> plain_of = split_shared(
            M, sites,
            [&](Function& G) {
                return sites.count(&G) != 0 && !G.hasFnAttribute(kNeverSwitch);
            },
            n_local);
        std::vector<Function*> plains;
        for (auto& [F, plain] : plain_of) plains.push_back(plain);
        const unsigned n_plain_late = plain_callees(plains, clones, [&](Function& G) {
            return skip(G) || sites.count(&G) == 0 || sites[&G].empty();
        });

        // Phase 3: insert.
        LLVMContext& C = M.getContext();
        Type* I32 = Type::getInt32Ty(C);
        GlobalVariable* Q = M.getNamedGlobal(kQuantum);
        FunctionCallee Expired;
        bool any = false;
        for (auto& [F, list] : sites) {
            if (list.empty()) continue;
            if (!any) {
                any = true;
                if (Q == nullptr)
                    Q = new GlobalVariable(M, I32, false, GlobalValue::ExternalLinkage, nullptr, kQuantum, nullptr,
                                           GlobalValue::InitialExecTLSModel);
                Expired = M.getOrInsertFunction(kExpired, FunctionType::get(Type::getVoidTy(C), false));
                if (auto* EF = dyn_cast<Function>(Expired.getCallee())) {
                    EF->addFnAttr(Attribute::Cold);
                    EF->addFnAttr(Attribute::NoUnwind);
                }
            }
            MDNode* unlikely = MDBuilder(C).createBranchWeights(1, 1 << 20);
            auto emit = [&](Instruction* before, unsigned k, bool branch = true, Value* bytes = nullptr) {
                IRBuilder<> B(before);
                LoadInst* q = B.CreateLoad(I32, Q, "coop.q");
                Value* charge = ConstantInt::get(I32, k);
                if (bytes != nullptr) {
                    // k + min(bytes / 16, 2^30): never wraps the counter.
                    Value* units = B.CreateLShr(bytes, 4, "coop.bulk");
                    Constant* cap = ConstantInt::get(bytes->getType(), 1u << 30);
                    units = B.CreateSelect(B.CreateICmpULT(units, cap), units, cap);
                    charge = B.CreateAdd(charge, B.CreateTrunc(units, I32));
                }
                Value* n = B.CreateSub(q, charge, "coop.q.left");
                B.CreateStore(n, Q);
                if (!branch) return;
                Value* neg = B.CreateICmpSLT(n, ConstantInt::get(I32, 0), "coop.q.expired");
                Instruction* then = SplitBlockAndInsertIfThen(neg, before, false, unlikely);
                IRBuilder<> T(then);
                CallInst* call = T.CreateCall(Expired);
                call->setDebugLoc(before->getDebugLoc());
            };
            for (Site& s : list) {
                if (s.chunk == 0) {
                    emit(s.before, s.k, s.branch, s.bytes);
                    continue;
                }
                // A counter of iterations left in the chunk: C at loop entry, then down to 1;
                // at 0 the check charges the chunk and the counter restarts.
                BasicBlock* H = s.header;
                PHINode* left = PHINode::Create(I32, 2, "coop.chunk", &H->front());
                Constant* chunk = ConstantInt::get(I32, s.chunk);
                std::set<BasicBlock*> latch_set(s.latches.begin(), s.latches.end());
                for (BasicBlock* P : predecessors(H))
                    if (latch_set.count(P) == 0) left->addIncoming(chunk, P);
                for (BasicBlock* Lt : s.latches) {
                    IRBuilder<> B(Lt->getTerminator());
                    Value* dec = B.CreateSub(left, ConstantInt::get(I32, 1), "coop.chunk.dec");
                    Value* zero = B.CreateICmpEQ(dec, ConstantInt::get(I32, 0), "coop.chunk.done");
                    Value* next = B.CreateSelect(zero, chunk, dec, "coop.chunk.next");
                    // One incoming entry per edge (a latch may branch to the header twice).
                    for (BasicBlock* S : successors(Lt))
                        if (S == H) left->addIncoming(next, Lt);
                    Instruction* then = SplitBlockAndInsertIfThen(zero, Lt->getTerminator(), false, unlikely);
                    emit(then, s.k * s.chunk);
                }
            }
        }
        // Diagnostics that need the checks in place: libc's static buffers used after a
        // possible switch.
        auto switches = [&](const CallBase* CB) {
            if (CB->isInlineAsm() || isa<IntrinsicInst>(CB)) return false;
            const Function* c = CB->getCalledFunction();
            if (c == nullptr) return true;  // indirect: perhaps a checked function
            const StringRef n = c->getName();
            if (n == kExpired || n == kLockReleased) return true;
            if (n == kLockTaken || tls_source(CB)) return false;
            if (runtime(n)) return true;  // coop's yield, a park
            if (c->isDeclaration()) return false;  // libc, a library: assumed not to switch
            auto it = sites.find(const_cast<Function*>(c));
            return it != sites.end() && !it->second.empty();
        };
        for (Function& F : M)
            if (!UnrollOnly && !skip(F) && !F.hasFnAttribute(kNeverSwitch)) warn_static_buffers(F, switches);
        if (Stats)
            errs() << "coop-quantum: " << M.getSourceFileName() << ": " << n_entry << " entry, " << n_latch
                   << " latch, " << n_chunked << " chunked-loop, " << n_bulk << " bulk-memory, " << n_irreducible
                   << " irreducible-edge checks; " << n_cold << " cold-path charges; " << n_skipped_calls << " loops left to their callees; " << n_unrolled
                   << " short loops unrolled; " << n_local << " shared definitions made local; " << n_plain + n_plain_late
                   << " plain clones for code that must not switch; " << n_lock_hooks
                   << " lock calls hooked; " << n_tls_calls << " calls given a thread-local's address\n";
        return any ? PreservedAnalyses::none() : PreservedAnalyses::all();
    }
    static bool isRequired() { return true; }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
    return {LLVM_PLUGIN_API_VERSION, "CoopQuantum", "1", [](PassBuilder& PB) {
                PB.registerPipelineStartEPCallback(
                    [](ModulePassManager& MPM, OptimizationLevel) { MPM.addPass(PrepareUncooperative()); });
                PB.registerPeepholeEPCallback(
                    [](FunctionPassManager& FPM, OptimizationLevel) { FPM.addPass(OpaqueTls()); });
                PB.registerOptimizerLastEPCallback(
                    [](ModulePassManager& MPM, OptimizationLevel) { MPM.addPass(CoopQuantum()); });
                // opt -load-pass-plugin=... -passes=coop-quantum (tests)
                PB.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager& MPM, ArrayRef<PassBuilder::PipelineElement>) {
                        if (name == "coop-quantum") {
                            MPM.addPass(PrepareUncooperative());
                            MPM.addPass(CoopQuantum());
                            return true;
                        }
                        return false;
                    });
            }};
}
