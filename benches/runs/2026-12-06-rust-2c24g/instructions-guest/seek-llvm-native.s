0000000000bbfc20 <memtable_skiplist::SkipList::seek>:
  bbfc20:	push   %rbp
  bbfc21:	push   %r15
  bbfc23:	push   %r14
  bbfc25:	push   %r13
  bbfc27:	push   %r12
  bbfc29:	push   %rbx
  bbfc2a:	sub    $0x48,%rsp
  bbfc2e:	mov    %rcx,0x30(%rsp)
  bbfc33:	mov    0x18(%rdi),%rcx
  bbfc37:	test   %rcx,%rcx
  bbfc3a:	je     bbfe36 <memtable_skiplist::SkipList::seek+0x216>
  bbfc40:	mov    %rdx,%rbx
  bbfc43:	mov    %rsi,%r13
  bbfc46:	mov    0x8(%rdi),%rdx
  bbfc4a:	mov    %rdi,0x28(%rsp)
  bbfc4f:	mov    0x10(%rdi),%r14
  bbfc53:	xor    %r8d,%r8d
  bbfc56:	movl   $0x0,0xc(%rsp)
  bbfc5e:	mov    %rdx,0x10(%rsp)
  bbfc63:	data16 data16 data16 cs nopw 0x0(%rax,%rax,1)
  bbfc70:	mov    %r8d,%r11d
  bbfc73:	lea    (%r11,%rcx,4),%rdi
  bbfc77:	add    $0x14,%rdi
  bbfc7b:	lea    (%r11,%rcx,4),%rsi
  bbfc7f:	add    $0x18,%rsi
  bbfc83:	cmp    $0xfffffffffffffffb,%rdi
  bbfc87:	ja     bbfe73 <memtable_skiplist::SkipList::seek+0x253>
  bbfc8d:	cmp    %r14,%rsi
  bbfc90:	ja     bbfe73 <memtable_skiplist::SkipList::seek+0x253>
  bbfc96:	mov    (%rdx,%rdi,1),%eax
  bbfc99:	test   %eax,%eax
  bbfc9b:	mov    %rcx,0x38(%rsp)
  bbfca0:	je     bbfe00 <memtable_skiplist::SkipList::seek+0x1e0>
  bbfca6:	cmp    0xc(%rsp),%eax
  bbfcaa:	je     bbfe00 <memtable_skiplist::SkipList::seek+0x1e0>
  bbfcb0:	lea    0x14(,%rcx,4),%rcx
  bbfcb8:	mov    %rcx,0x40(%rsp)
  bbfcbd:	nopl   (%rax)
  bbfcc0:	mov    %eax,%ebp
  bbfcc2:	lea    0x14(%rbp),%rsi
  bbfcc6:	cmp    %r14,%rsi
  bbfcc9:	ja     bbfe5c <memtable_skiplist::SkipList::seek+0x23c>
  bbfccf:	jae    bbfeaa <memtable_skiplist::SkipList::seek+0x28a>
  bbfcd5:	mov    %eax,%r12d
  bbfcd8:	mov    0x10(%rdx,%rbp,1),%r15d
  bbfcdd:	movzbl 0x14(%rdx,%rbp,1),%eax
  bbfce2:	lea    0x0(,%rax,4),%rcx
  bbfcea:	add    %rbp,%rcx
  bbfced:	lea    0x18(,%rax,4),%rdi
  bbfcf5:	add    %rbp,%rdi
  bbfcf8:	lea    (%r15,%rcx,1),%rsi
  bbfcfc:	add    $0x18,%rsi
  bbfd00:	cmp    %r14,%rsi
  bbfd03:	ja     bbfe83 <memtable_skiplist::SkipList::seek+0x263>
  bbfd09:	mov    %r11,0x18(%rsp)
  bbfd0e:	mov    %r8,0x20(%rsp)
  bbfd13:	add    %rdx,%rdi
  bbfd16:	cmp    %r15,%rbx
  bbfd19:	mov    %r15,%rdx
  bbfd1c:	cmovb  %rbx,%rdx
  bbfd20:	mov    %edx,%esi
  bbfd22:	and    $0xfffffff8,%esi
  bbfd25:	cmp    $0x8,%rdx
  bbfd29:	jb     bbfd50 <memtable_skiplist::SkipList::seek+0x130>
  bbfd2b:	xor    %ecx,%ecx
  bbfd2d:	nopl   (%rax)
  bbfd30:	cmp    %rcx,%rsi
  bbfd33:	je     bbfd50 <memtable_skiplist::SkipList::seek+0x130>
  bbfd35:	mov    (%rdi,%rcx,1),%rax
  bbfd39:	mov    0x0(%r13,%rcx,1),%r8
  bbfd3e:	cmp    %r8,%rax
  bbfd41:	jne    bbfdb8 <memtable_skiplist::SkipList::seek+0x198>
  bbfd43:	add    $0x8,%rcx
  bbfd47:	cmp    %rcx,%rsi
  bbfd4a:	jne    bbfd30 <memtable_skiplist::SkipList::seek+0x110>
  bbfd4c:	nopl   0x0(%rax)
  bbfd50:	add    %rsi,%rdi
  bbfd53:	and    $0x7,%edx
  bbfd56:	add    %r13,%rsi
  bbfd59:	call   *0xe6e149(%rip)        # 1a2dea8 <memcmp@GLIBC_2.2.5>
  bbfd5f:	xor    %ecx,%ecx
  bbfd61:	cmp    %r15,%rbx
  bbfd64:	seta   %cl
  bbfd67:	xor    %edx,%edx
  bbfd69:	test   %eax,%eax
  bbfd6b:	sets   %dl
  bbfd6e:	cmovne %edx,%ecx
  bbfd71:	cmp    $0x1,%cl
  bbfd74:	jne    bbfde0 <memtable_skiplist::SkipList::seek+0x1c0>
  bbfd76:	mov    0x40(%rsp),%rax
  bbfd7b:	lea    (%rax,%rbp,1),%rdi
  bbfd7f:	lea    (%rax,%rbp,1),%rsi
  bbfd83:	add    $0x4,%rsi
  bbfd87:	cmp    $0xfffffffffffffffb,%rdi
  bbfd8b:	ja     bbfe73 <memtable_skiplist::SkipList::seek+0x253>
  bbfd91:	cmp    %r14,%rsi
  bbfd94:	ja     bbfe73 <memtable_skiplist::SkipList::seek+0x253>
  bbfd9a:	mov    0x10(%rsp),%rdx
  bbfd9f:	mov    (%rdx,%rdi,1),%eax
  bbfda2:	mov    %r12d,%r8d
  bbfda5:	test   %eax,%eax
  bbfda7:	je     bbfe03 <memtable_skiplist::SkipList::seek+0x1e3>
  bbfda9:	mov    %rbp,%r11
  bbfdac:	cmp    0xc(%rsp),%eax
  bbfdb0:	jne    bbfcc0 <memtable_skiplist::SkipList::seek+0xa0>
  bbfdb6:	jmp    bbfe03 <memtable_skiplist::SkipList::seek+0x1e3>
  bbfdb8:	mov    %r8,%rcx
  bbfdbb:	xor    %rax,%rcx
  bbfdbe:	tzcnt  %rcx,%rcx
  bbfdc3:	and    $0x38,%cl
  bbfdc6:	shr    %cl,%rax
  bbfdc9:	shr    %cl,%r8
  bbfdcc:	cmp    %r8b,%al
  bbfdcf:	jb     bbfd76 <memtable_skiplist::SkipList::seek+0x156>
  bbfdd1:	data16 data16 data16 data16 data16 cs nopw 0x0(%rax,%rax,1)
  bbfde0:	mov    0x18(%rsp),%rbp
  bbfde5:	mov    %r12d,%eax
  bbfde8:	mov    0x10(%rsp),%rdx
  bbfded:	mov    0x20(%rsp),%r8
  bbfdf2:	jmp    bbfe03 <memtable_skiplist::SkipList::seek+0x1e3>
  bbfdf4:	data16 data16 cs nopw 0x0(%rax,%rax,1)
  bbfe00:	mov    %r11,%rbp
  bbfe03:	mov    0x38(%rsp),%rcx
  bbfe08:	lea    -0x1(%rcx),%rdi
  bbfe0c:	cmp    $0xd,%rcx
  bbfe10:	jae    bbfebd <memtable_skiplist::SkipList::seek+0x29d>
  bbfe16:	mov    0x30(%rsp),%rcx
  bbfe1b:	mov    %r8d,(%rcx,%rdi,4)
  bbfe1f:	mov    %eax,0xc(%rsp)
  bbfe23:	mov    %rdi,%rcx
  bbfe26:	test   %rdi,%rdi
  bbfe29:	jne    bbfc70 <memtable_skiplist::SkipList::seek+0x50>
  bbfe2f:	mov    0x28(%rsp),%rdi
  bbfe34:	jmp    bbfe3c <memtable_skiplist::SkipList::seek+0x21c>
  bbfe36:	mov    0x10(%rdi),%r14
  bbfe3a:	xor    %ebp,%ebp
  bbfe3c:	lea    0x1c(%rbp),%rsi
  bbfe40:	cmp    %r14,%rsi
  bbfe43:	ja     bbfe93 <memtable_skiplist::SkipList::seek+0x273>
  bbfe45:	mov    0x8(%rdi),%rax
  bbfe49:	mov    0x18(%rax,%rbp,1),%eax
  bbfe4d:	add    $0x48,%rsp
  bbfe51:	pop    %rbx
  bbfe52:	pop    %r12
  bbfe54:	pop    %r13
  bbfe56:	pop    %r14
  bbfe58:	pop    %r15
  bbfe5a:	pop    %rbp
  bbfe5b:	ret
  bbfe5c:	add    $0x10,%rbp
  bbfe60:	lea    0xe11b19(%rip),%rcx        # 19d1980 <anon.65f7fa99dc8e90d3e10da5a930ef6794.11.llvm
  bbfe67:	mov    %rbp,%rdi
  bbfe6a:	mov    %r14,%rdx
  bbfe6d:	call   *0xe6ddcd(%rip)        # 1a2dc40 <_DYNAMIC+0x2d8>
  bbfe73:	lea    0xe11b06(%rip),%rcx        # 19d1980 <anon.65f7fa99dc8e90d3e10da5a930ef6794.11.llvm
  bbfe7a:	mov    %r14,%rdx
  bbfe7d:	call   *0xe6ddbd(%rip)        # 1a2dc40 <_DYNAMIC+0x2d8>
  bbfe83:	lea    0xe11ac6(%rip),%rcx        # 19d1950 <anon.65f7fa99dc8e90d3e10da5a930ef6794.9.llvm.
  bbfe8a:	mov    %r14,%rdx
